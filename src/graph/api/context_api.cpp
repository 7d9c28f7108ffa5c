// The context's entry points: creation with the standard kernels, attributes,
// directives, the log, user structs, status of error objects.
#include "graph/api/attributes.hpp"
#include "graph/api/entry.hpp"
#include "graph/core/convolution.hpp"
#include "graph/core/kernel.hpp"
#include "graph/kernels/kernel_definition.hpp"

#include <VX/vx_ext_ferry.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <vector>

using namespace ferry::graph;

namespace {

constexpr char implementation_name[] = "ferry.openvx";
constexpr char extensions[] = "";

// The standard kernels become kernel objects of the context, held by it alone
// (vxGetKernelByEnum hands out external references on top).
void register_standard_kernels(vx_context context) {
  for (const kernel_definition& definition : standard_kernels()) {
    auto* kernel = new _vx_kernel(context);
    kernel->enumeration = definition.enumeration;
    kernel->name = definition.name;
    kernel->parameters = definition.parameters;
    kernel->definition = &definition;
    kernel->finalized = true;
    kernel->external = 0;
    kernel->internal = 1;
    register_reference(kernel);
    context->kernels.emplace(kernel->enumeration, kernel);
  }
}

vx_uint32 count_references(vx_context context) {
  vx_uint32 count = 0;
  for_each_reference(
      context, [](vx_reference ref, void* data) {
        if (ref->type != VX_TYPE_ERROR) ++*static_cast<vx_uint32*>(data);
      },
      &count);
  return count + 1;  // the context itself
}

}  // namespace

VX_API_ENTRY vx_context VX_API_CALL vxCreateContext(void) {
  try {
    std::lock_guard lock(api_mutex());
    auto* context = new _vx_context;
    register_reference(context);
    register_standard_kernels(context);
    return context;
  } catch (...) {
    refuse("vxCreateContext", VX_ERROR_NO_MEMORY, "out of host memory");
    return nullptr;
  }
}

VX_API_ENTRY vx_status VX_API_CALL vxReleaseContext(vx_context* context) {
  if (context == nullptr) return VX_ERROR_INVALID_REFERENCE;
  return entry("vxReleaseContext", [&]() -> vx_status {
    vx_context found = as<_vx_context>(*context, VX_TYPE_CONTEXT);
    if (found == nullptr) return refuse("vxReleaseContext", VX_ERROR_INVALID_REFERENCE, "not a context");
    if (found->external.load() > 1) {
      found->external.fetch_sub(1);
    } else {
      destroy_context(found);
    }
    *context = nullptr;
    return VX_SUCCESS;
  });
}

VX_API_ENTRY vx_context VX_API_CALL vxGetContext(vx_reference reference) {
  return entry_value<vx_context>("vxGetContext", nullptr, [&]() -> vx_context {
    if (!is_live(reference)) return nullptr;  // error objects too have a context
    return reference->type == VX_TYPE_CONTEXT ? reinterpret_cast<vx_context>(reference) : reference->context;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxQueryContext(vx_context context, vx_enum attribute, void* ptr, vx_size size) {
  return entry("vxQueryContext", [&]() -> vx_status {
    vx_context c = as<_vx_context>(context, VX_TYPE_CONTEXT);
    if (c == nullptr) return VX_ERROR_INVALID_REFERENCE;
    switch (attribute) {
      case VX_CONTEXT_VENDOR_ID: return answer(ptr, size, static_cast<vx_uint16>(VX_ID_USER));
      case VX_CONTEXT_VERSION: return answer(ptr, size, static_cast<vx_uint16>(VX_VERSION));
      case VX_CONTEXT_UNIQUE_KERNELS: return answer(ptr, size, static_cast<vx_uint32>(c->kernels.size()));
      case VX_CONTEXT_MODULES: return answer(ptr, size, static_cast<vx_uint32>(c->next_user_library - 1));
      case VX_CONTEXT_REFERENCES: return answer(ptr, size, count_references(c));
      case VX_CONTEXT_IMPLEMENTATION:
        if (size > VX_MAX_IMPLEMENTATION_NAME) return VX_ERROR_INVALID_PARAMETERS;
        return answer_text(ptr, size, implementation_name);
      case VX_CONTEXT_EXTENSIONS_SIZE: return answer(ptr, size, static_cast<vx_size>(sizeof extensions));
      case VX_CONTEXT_EXTENSIONS: return answer_text(ptr, size, extensions);
      case VX_CONTEXT_CONVOLUTION_MAX_DIMENSION: return answer(ptr, size, max_convolution_dimension);
      case VX_CONTEXT_NONLINEAR_MAX_DIMENSION: return answer(ptr, size, max_convolution_dimension);
      case VX_CONTEXT_OPTICAL_FLOW_MAX_WINDOW_DIMENSION: return answer(ptr, size, vx_size{9});
      case VX_CONTEXT_MAX_TENSOR_DIMS: return answer(ptr, size, vx_size{0});
      case VX_CONTEXT_IMMEDIATE_BORDER: return answer(ptr, size, c->immediate_border);
      case VX_CONTEXT_IMMEDIATE_BORDER_POLICY: return answer(ptr, size, c->immediate_border_policy);
      case VX_CONTEXT_UNIQUE_KERNEL_TABLE: {
        // An array of VX_CONTEXT_UNIQUE_KERNELS entries.
        if (ptr == nullptr || size != c->kernels.size() * sizeof(vx_kernel_info_t))
          return VX_ERROR_INVALID_PARAMETERS;
        auto* table = static_cast<vx_kernel_info_t*>(ptr);
        for (const auto& [enumeration, kernel] : c->kernels) {
          table->enumeration = enumeration;
          std::memset(table->name, 0, sizeof table->name);
          std::strncpy(table->name, kernel->name.c_str(), sizeof table->name - 1);
          ++table;
        }
        return VX_SUCCESS;
      }
      default:
        return refuse("vxQueryContext", VX_ERROR_NOT_SUPPORTED, "no context attribute 0x%x", attribute);
    }
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxSetContextAttribute(vx_context context, vx_enum attribute, const void* ptr,
                                                         vx_size size) {
  return entry("vxSetContextAttribute", [&]() -> vx_status {
    vx_context c = as<_vx_context>(context, VX_TYPE_CONTEXT);
    if (c == nullptr) return VX_ERROR_INVALID_REFERENCE;
    switch (attribute) {
      case VX_CONTEXT_IMMEDIATE_BORDER: {
        vx_border_t border{};
        vx_status status = take(ptr, size, border);
        if (status != VX_SUCCESS) return status;
        if (border.mode != VX_BORDER_UNDEFINED && border.mode != VX_BORDER_CONSTANT &&
            border.mode != VX_BORDER_REPLICATE) {
          add_log(c, VX_ERROR_INVALID_VALUE, "vxSetContextAttribute: 0x%x is no border mode", border.mode);
          return VX_ERROR_INVALID_VALUE;
        }
        c->immediate_border = border;
        return VX_SUCCESS;
      }
      case VX_CONTEXT_IMMEDIATE_BORDER_POLICY: {
        vx_enum policy = 0;
        vx_status status = take(ptr, size, policy);
        if (status != VX_SUCCESS) return status;
        if (policy != VX_BORDER_POLICY_DEFAULT_TO_UNDEFINED && policy != VX_BORDER_POLICY_RETURN_ERROR) {
          add_log(c, VX_ERROR_INVALID_VALUE, "vxSetContextAttribute: 0x%x is no border policy", policy);
          return VX_ERROR_INVALID_VALUE;
        }
        c->immediate_border_policy = policy;
        return VX_SUCCESS;
      }
      default:
        return refuse("vxSetContextAttribute", VX_ERROR_NOT_SUPPORTED, "attribute 0x%x cannot be set", attribute);
    }
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxDirective(vx_reference reference, vx_enum directive) {
  return entry("vxDirective", [&]() -> vx_status {
    vx_reference ref = find(reference, VX_TYPE_REFERENCE);
    if (ref == nullptr) return VX_ERROR_INVALID_REFERENCE;
    bool is_context = ref->type == VX_TYPE_CONTEXT;
    auto* context = is_context ? reinterpret_cast<vx_context>(ref) : ref->context;
    switch (directive) {
      case VX_DIRECTIVE_DISABLE_LOGGING:
      case VX_DIRECTIVE_ENABLE_LOGGING:
        if (!is_context) return VX_ERROR_NOT_SUPPORTED;
        context->logging_enabled = directive == VX_DIRECTIVE_ENABLE_LOGGING;
        return VX_SUCCESS;
      case VX_DIRECTIVE_DISABLE_PERFORMANCE:
      case VX_DIRECTIVE_ENABLE_PERFORMANCE:
        if (!is_context) return VX_ERROR_NOT_SUPPORTED;
        context->performance_enabled = directive == VX_DIRECTIVE_ENABLE_PERFORMANCE;
        return VX_SUCCESS;
      default:
        return refuse("vxDirective", VX_ERROR_NOT_SUPPORTED, "no directive 0x%x", directive);
    }
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxGetStatus(vx_reference reference) {
  if (reference == nullptr) return VX_ERROR_NO_RESOURCES;
  return entry("vxGetStatus", [&]() -> vx_status {
    if (!is_live(reference)) return VX_ERROR_INVALID_REFERENCE;
    return reference->type == VX_TYPE_ERROR ? reference->status : VX_SUCCESS;
  });
}

VX_API_ENTRY void VX_API_CALL vxRegisterLogCallback(vx_context context, vx_log_callback_f callback,
                                                    vx_bool reentrant) {
  entry("vxRegisterLogCallback", [&]() -> vx_status {
    vx_context c = as<_vx_context>(context, VX_TYPE_CONTEXT);
    if (c == nullptr) return VX_ERROR_INVALID_REFERENCE;
    c->log_callback = callback;
    c->log_reentrant = reentrant;
    return VX_SUCCESS;
  });
}

VX_API_ENTRY void VX_API_CALL vxAddLogEntry(vx_reference reference, vx_status status, const char* message, ...) {
  if (message == nullptr) return;
  char text[VX_MAX_LOG_MESSAGE_LEN];
  va_list args;
  va_start(args, message);
  std::vsnprintf(text, sizeof text, message, args);
  va_end(args);
  entry("vxAddLogEntry", [&]() -> vx_status {
    if (!is_live(reference)) return VX_ERROR_INVALID_REFERENCE;
    add_log(reference, status, "%s", text);
    return VX_SUCCESS;
  });
}

VX_API_ENTRY vx_enum VX_API_CALL vxRegisterUserStruct(vx_context context, vx_size size) {
  return vxRegisterUserStructWithName(context, size, nullptr);
}

VX_API_ENTRY vx_enum VX_API_CALL vxRegisterUserStructWithName(vx_context context, vx_size size,
                                                              const vx_char* type_name) {
  return entry_value<vx_enum>("vxRegisterUserStructWithName", VX_TYPE_INVALID, [&]() -> vx_enum {
    vx_context c = as<_vx_context>(context, VX_TYPE_CONTEXT);
    if (c == nullptr || size == 0) return VX_TYPE_INVALID;
    if (type_name != nullptr) {
      if (std::strlen(type_name) >= VX_MAX_REFERENCE_NAME) return VX_TYPE_INVALID;
      for (const auto& [id, known] : c->user_structs)
        if (known.name == type_name) return VX_TYPE_INVALID;
    }
    vx_enum id = VX_TYPE_USER_STRUCT_START + static_cast<vx_enum>(c->user_structs.size());
    if (id > VX_TYPE_USER_STRUCT_END) return VX_TYPE_INVALID;
    c->user_structs[id] = {size, type_name == nullptr ? "" : type_name};
    return id;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxGetUserStructNameByEnum(vx_context context, vx_enum user_struct_type,
                                                             vx_char* type_name, vx_size size) {
  return entry("vxGetUserStructNameByEnum", [&]() -> vx_status {
    vx_context c = as<_vx_context>(context, VX_TYPE_CONTEXT);
    if (c == nullptr) return VX_ERROR_INVALID_REFERENCE;
    auto found = c->user_structs.find(user_struct_type);
    if (found == c->user_structs.end() || found->second.name.empty()) return VX_FAILURE;
    if (type_name == nullptr || size <= found->second.name.size()) return VX_ERROR_NO_MEMORY;
    std::memcpy(type_name, found->second.name.c_str(), found->second.name.size() + 1);
    return VX_SUCCESS;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxGetUserStructEnumByName(vx_context context, const vx_char* type_name,
                                                             vx_enum* user_struct_type) {
  return entry("vxGetUserStructEnumByName", [&]() -> vx_status {
    vx_context c = as<_vx_context>(context, VX_TYPE_CONTEXT);
    if (c == nullptr) return VX_ERROR_INVALID_REFERENCE;
    if (type_name == nullptr || user_struct_type == nullptr) return VX_FAILURE;
    for (const auto& [id, known] : c->user_structs)
      if (!known.name.empty() && known.name == type_name) {
        *user_struct_type = id;
        return VX_SUCCESS;
      }
    return VX_FAILURE;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxSetImmediateModeTarget(vx_context context, vx_enum target_enum,
                                                            const char* target_string) {
  return entry("vxSetImmediateModeTarget", [&]() -> vx_status {
    if (as<_vx_context>(context, VX_TYPE_CONTEXT) == nullptr) return VX_ERROR_INVALID_REFERENCE;
    // One target: the context's devices (FERRY_VX_DEVICES chooses them).
    if (target_enum == VX_TARGET_ANY) return VX_SUCCESS;
    if (target_enum == VX_TARGET_STRING && target_string != nullptr && std::strcmp(target_string, "any") == 0)
      return VX_SUCCESS;
    return VX_ERROR_NOT_SUPPORTED;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxHint(vx_reference reference, vx_enum hint, const void* data, vx_size data_size) {
  return entry("vxHint", [&]() -> vx_status {
    if (find(reference, VX_TYPE_REFERENCE) == nullptr) return VX_ERROR_INVALID_REFERENCE;
    // Hints may be ignored (the spec); none changes what this runtime does.
    return VX_SUCCESS;
  });
}
