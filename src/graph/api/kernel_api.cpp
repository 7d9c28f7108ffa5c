// The kernel's entry points: looking kernels up, user kernels and their
// parameters, kernel libraries (vxLoadKernels).
#include "graph/api/attributes.hpp"
#include "graph/api/entry.hpp"
#include "graph/api/graph_ops.hpp"
#include "graph/core/kernel.hpp"
#include "graph/core/parameter.hpp"

#include <dlfcn.h>

#include <cstring>
#include <map>
#include <string>

using namespace ferry::graph;

namespace {

/// Offsets of the standard kernels in VX_LIBRARY_KHR_BASE (vx_kernels.h):
/// enumerations up to this one are the spec's, whether or not Ferry runs them.
constexpr vx_enum last_standard_offset = 0x40;

bool is_standard_enumeration(vx_enum enumeration) {
  vx_enum base = VX_KERNEL_BASE(VX_ID_KHRONOS, VX_LIBRARY_KHR_BASE);
  return enumeration > base && enumeration <= base + last_standard_offset;
}

/// vxRegisterKernelLibrary's modules, by name, for vxLoadKernels.
struct kernel_library {
  vx_publish_kernels_f publish;
  vx_unpublish_kernels_f unpublish;
};
std::map<std::string, kernel_library>& registered_libraries() {
  static auto* libraries = new std::map<std::string, kernel_library>;
  return *libraries;
}

vx_status check_user_kernel(vx_kernel kernel, const char* entry_name) {
  if (kernel->definition != nullptr) {
    add_log(kernel, VX_ERROR_INVALID_PARAMETERS, "%s: %s is a standard kernel, not a user kernel", entry_name,
            kernel->name.c_str());
    return VX_ERROR_INVALID_PARAMETERS;
  }
  return VX_SUCCESS;
}

}  // namespace

VX_API_ENTRY vx_kernel VX_API_CALL vxGetKernelByEnum(vx_context context, vx_enum kernel) {
  return entry_object<vx_kernel>("vxGetKernelByEnum", context, [&](vx_status& status) -> vx_kernel {
    vx_context c = as<_vx_context>(context, VX_TYPE_CONTEXT);
    if (c == nullptr) {
      status = VX_ERROR_INVALID_REFERENCE;
      return nullptr;
    }
    auto found = c->kernels.find(kernel);
    if (found == c->kernels.end()) {
      if (is_standard_enumeration(kernel)) {
        add_log(c, VX_ERROR_NOT_IMPLEMENTED, "vxGetKernelByEnum: standard kernel 0x%x is not implemented by Ferry",
                kernel);
        status = VX_ERROR_NOT_IMPLEMENTED;
      } else {
        add_log(c, VX_ERROR_INVALID_PARAMETERS, "vxGetKernelByEnum: no kernel 0x%x", kernel);
        status = VX_ERROR_INVALID_PARAMETERS;
      }
      return nullptr;
    }
    found->second->external.fetch_add(1);
    return found->second;
  });
}

VX_API_ENTRY vx_kernel VX_API_CALL vxGetKernelByName(vx_context context, const vx_char* name) {
  return entry_object<vx_kernel>("vxGetKernelByName", context, [&](vx_status& status) -> vx_kernel {
    vx_context c = as<_vx_context>(context, VX_TYPE_CONTEXT);
    if (c == nullptr) {
      status = VX_ERROR_INVALID_REFERENCE;
      return nullptr;
    }
    if (name == nullptr) {
      status = VX_ERROR_INVALID_PARAMETERS;
      return nullptr;
    }
    // "name:target" names a target too; this implementation's one target is "any".
    std::string wanted = name;
    size_t colon = wanted.find(':');
    if (colon != std::string::npos) wanted.resize(colon);
    for (auto& [enumeration, kernel] : c->kernels)
      if (kernel->name == wanted) {
        kernel->external.fetch_add(1);
        return kernel;
      }
    add_log(c, VX_ERROR_INVALID_PARAMETERS, "vxGetKernelByName: no kernel named \"%s\"", name);
    status = VX_ERROR_INVALID_PARAMETERS;
    return nullptr;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxQueryKernel(vx_kernel kernel, vx_enum attribute, void* ptr, vx_size size) {
  return entry("vxQueryKernel", [&]() -> vx_status {
    vx_kernel k = as<_vx_kernel>(kernel, VX_TYPE_KERNEL);
    if (k == nullptr) return VX_ERROR_INVALID_REFERENCE;
    switch (attribute) {
      case VX_KERNEL_PARAMETERS: return answer(ptr, size, static_cast<vx_uint32>(k->parameters.size()));
      case VX_KERNEL_NAME:
        if (size > VX_MAX_KERNEL_NAME) return VX_ERROR_INVALID_PARAMETERS;
        return answer_text(ptr, size, k->name.c_str());
      case VX_KERNEL_ENUM: return answer(ptr, size, k->enumeration);
      case VX_KERNEL_LOCAL_DATA_SIZE: return answer(ptr, size, k->local_data_size);
      default: return refuse("vxQueryKernel", VX_ERROR_NOT_SUPPORTED, "no kernel attribute 0x%x", attribute);
    }
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxReleaseKernel(vx_kernel* kernel) { return release_handle(kernel, VX_TYPE_KERNEL); }

VX_API_ENTRY vx_status VX_API_CALL vxAllocateUserKernelId(vx_context context, vx_enum* pKernelEnumId) {
  return entry("vxAllocateUserKernelId", [&]() -> vx_status {
    vx_context c = as<_vx_context>(context, VX_TYPE_CONTEXT);
    if (c == nullptr) return VX_ERROR_INVALID_REFERENCE;
    if (pKernelEnumId == nullptr) return VX_ERROR_INVALID_PARAMETERS;
    // Kernel ids of library 0 of the user vendor: 4096 of them.
    if (c->next_user_kernel > VX_KERNEL_BASE(VX_ID_USER, 0) + 0xFFF) return VX_ERROR_NO_RESOURCES;
    *pKernelEnumId = c->next_user_kernel++;
    return VX_SUCCESS;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxAllocateUserKernelLibraryId(vx_context context, vx_enum* pLibraryId) {
  return entry("vxAllocateUserKernelLibraryId", [&]() -> vx_status {
    vx_context c = as<_vx_context>(context, VX_TYPE_CONTEXT);
    if (c == nullptr) return VX_ERROR_INVALID_REFERENCE;
    if (pLibraryId == nullptr) return VX_ERROR_INVALID_PARAMETERS;
    // Library 0xFF is Ferry's own (vx_ext_ferry.h).
    if (c->next_user_library >= 0xFF) return VX_ERROR_NO_RESOURCES;
    *pLibraryId = VX_KERNEL_BASE(VX_ID_USER, c->next_user_library++);
    return VX_SUCCESS;
  });
}

VX_API_ENTRY vx_kernel VX_API_CALL vxAddUserKernel(vx_context context, const vx_char* name, vx_enum enumeration,
                                                   vx_kernel_f func_ptr, vx_uint32 numParams,
                                                   vx_kernel_validate_f validate, vx_kernel_initialize_f init,
                                                   vx_kernel_deinitialize_f deinit) {
  return entry_object<vx_kernel>("vxAddUserKernel", context, [&](vx_status& status) -> vx_kernel {
    vx_context c = as<_vx_context>(context, VX_TYPE_CONTEXT);
    if (c == nullptr) {
      status = VX_ERROR_INVALID_REFERENCE;
      return nullptr;
    }
    auto refuse_kernel = [&](const char* why) -> vx_kernel {
      add_log(c, VX_ERROR_INVALID_PARAMETERS, "vxAddUserKernel: %s", why);
      status = VX_ERROR_INVALID_PARAMETERS;
      return nullptr;
    };
    if (name == nullptr || name[0] == '\0') return refuse_kernel("the kernel needs a name");
    if (strnlen(name, VX_MAX_KERNEL_NAME) == VX_MAX_KERNEL_NAME) return refuse_kernel("the name is too long");
    if (func_ptr == nullptr) return refuse_kernel("the kernel needs a function");
    if (validate == nullptr) return refuse_kernel("the kernel needs a validator");
    if (numParams == 0 || numParams > 256) return refuse_kernel("a kernel takes 1 to 256 parameters");
    if (c->kernels.count(enumeration) != 0) return refuse_kernel("the enumeration is taken");
    for (const auto& [e, k] : c->kernels)
      if (k->name == name) return refuse_kernel("the name is taken");
    auto* kernel = new _vx_kernel(c);
    kernel->enumeration = enumeration;
    kernel->name = name;
    kernel->parameters.resize(numParams);
    kernel->function = func_ptr;
    kernel->validate = validate;
    kernel->initialize = init;
    kernel->deinitialize = deinit;
    kernel->internal = 1;  // the context's table
    register_reference(kernel);
    c->kernels.emplace(enumeration, kernel);
    return kernel;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxAddParameterToKernel(vx_kernel kernel, vx_uint32 index, vx_enum dir,
                                                          vx_enum data_type, vx_enum state) {
  return entry("vxAddParameterToKernel", [&]() -> vx_status {
    vx_kernel k = as<_vx_kernel>(kernel, VX_TYPE_KERNEL);
    if (k == nullptr) return VX_ERROR_INVALID_REFERENCE;
    vx_status status = check_user_kernel(k, "vxAddParameterToKernel");
    if (status != VX_SUCCESS) return status;
    if (k->finalized) {
      add_log(k, VX_ERROR_INVALID_PARAMETERS, "vxAddParameterToKernel: %s is finalized", k->name.c_str());
      return VX_ERROR_INVALID_PARAMETERS;
    }
    if (index >= k->parameters.size() || (dir != VX_INPUT && dir != VX_OUTPUT) ||
        (state != VX_PARAMETER_STATE_REQUIRED && state != VX_PARAMETER_STATE_OPTIONAL)) {
      add_log(k, VX_ERROR_INVALID_PARAMETERS, "vxAddParameterToKernel: %s: bad index %u, direction or state",
              k->name.c_str(), index);
      return VX_ERROR_INVALID_PARAMETERS;
    }
    k->parameters[index] = {dir, data_type, state, true};
    return VX_SUCCESS;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxFinalizeKernel(vx_kernel kernel) {
  return entry("vxFinalizeKernel", [&]() -> vx_status {
    vx_kernel k = as<_vx_kernel>(kernel, VX_TYPE_KERNEL);
    if (k == nullptr) return VX_ERROR_INVALID_REFERENCE;
    vx_status status = check_user_kernel(k, "vxFinalizeKernel");
    if (status != VX_SUCCESS) return status;
    for (vx_uint32 i = 0; i < k->parameters.size(); ++i)
      if (!k->parameters[i].defined) {
        add_log(k, VX_ERROR_INVALID_PARAMETERS, "vxFinalizeKernel: %s: parameter %u was never added",
                k->name.c_str(), i);
        return VX_ERROR_INVALID_PARAMETERS;
      }
    k->finalized = true;
    return VX_SUCCESS;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxRemoveKernel(vx_kernel kernel) {
  return entry("vxRemoveKernel", [&]() -> vx_status {
    vx_kernel k = as<_vx_kernel>(kernel, VX_TYPE_KERNEL);
    if (k == nullptr) return VX_ERROR_INVALID_REFERENCE;
    vx_status status = check_user_kernel(k, "vxRemoveKernel");
    if (status != VX_SUCCESS) return status;
    vx_context c = k->context;
    auto found = c->kernels.find(k->enumeration);
    if (found == c->kernels.end() || found->second != k) return VX_ERROR_INVALID_PARAMETERS;
    c->kernels.erase(found);
    k->enabled = vx_false_e;  // nodes made of it keep it alive, new ones cannot be made
    // The removal releases the application's reference too (the spec).
    if (k->external.load() > 0) release_external(k);
    release_internal(k);
    return VX_SUCCESS;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxSetKernelAttribute(vx_kernel kernel, vx_enum attribute, const void* ptr,
                                                        vx_size size) {
  return entry("vxSetKernelAttribute", [&]() -> vx_status {
    vx_kernel k = as<_vx_kernel>(kernel, VX_TYPE_KERNEL);
    if (k == nullptr) return VX_ERROR_INVALID_REFERENCE;
    if (k->definition != nullptr || k->finalized) return VX_ERROR_NOT_SUPPORTED;
    if (attribute == VX_KERNEL_LOCAL_DATA_SIZE) return take(ptr, size, k->local_data_size);
    return refuse("vxSetKernelAttribute", VX_ERROR_NOT_SUPPORTED, "kernel attribute 0x%x cannot be set", attribute);
  });
}

VX_API_ENTRY vx_parameter VX_API_CALL vxGetKernelParameterByIndex(vx_kernel kernel, vx_uint32 index) {
  vx_context context = context_for_failure(kernel);
  return entry_object<vx_parameter>("vxGetKernelParameterByIndex", context, [&](vx_status& status) -> vx_parameter {
    vx_kernel k = as<_vx_kernel>(kernel, VX_TYPE_KERNEL);
    if (k == nullptr) {
      status = VX_ERROR_INVALID_REFERENCE;
      return nullptr;
    }
    if (index >= k->parameters.size()) {
      add_log(k, VX_ERROR_INVALID_PARAMETERS, "kernel %s: no parameter %u", k->name.c_str(), index);
      status = VX_ERROR_INVALID_PARAMETERS;
      return nullptr;
    }
    return make_parameter(nullptr, k, index);
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxRegisterKernelLibrary(vx_context context, const vx_char* module,
                                                           vx_publish_kernels_f publish,
                                                           vx_unpublish_kernels_f unpublish) {
  return entry("vxRegisterKernelLibrary", [&]() -> vx_status {
    if (as<_vx_context>(context, VX_TYPE_CONTEXT) == nullptr) return VX_ERROR_INVALID_REFERENCE;
    if (module == nullptr || publish == nullptr) return VX_ERROR_INVALID_PARAMETERS;
    registered_libraries()[module] = {publish, unpublish};
    return VX_SUCCESS;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxLoadKernels(vx_context context, const vx_char* module) {
  return entry("vxLoadKernels", [&]() -> vx_status {
    vx_context c = as<_vx_context>(context, VX_TYPE_CONTEXT);
    if (c == nullptr) return VX_ERROR_INVALID_REFERENCE;
    if (module == nullptr) return VX_ERROR_INVALID_PARAMETERS;
    auto found = registered_libraries().find(module);
    if (found != registered_libraries().end()) return found->second.publish(c);
    // Else a shared library lib<module>.so exporting vxPublishKernels (the spec's convention).
    std::string file = std::string("lib") + module + ".so";
    void* library = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      add_log(c, VX_ERROR_INVALID_PARAMETERS, "vxLoadKernels: cannot load %s: %s", file.c_str(), dlerror());
      return VX_ERROR_INVALID_PARAMETERS;
    }
    auto publish = reinterpret_cast<vx_publish_kernels_f>(dlsym(library, "vxPublishKernels"));
    if (publish == nullptr) {
      add_log(c, VX_ERROR_INVALID_PARAMETERS, "vxLoadKernels: %s has no vxPublishKernels", file.c_str());
      dlclose(library);
      return VX_ERROR_INVALID_PARAMETERS;
    }
    auto unpublish = reinterpret_cast<vx_unpublish_kernels_f>(dlsym(library, "vxUnpublishKernels"));
    registered_libraries()[module] = {publish, unpublish};
    return publish(c);
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxUnloadKernels(vx_context context, const vx_char* module) {
  return entry("vxUnloadKernels", [&]() -> vx_status {
    vx_context c = as<_vx_context>(context, VX_TYPE_CONTEXT);
    if (c == nullptr) return VX_ERROR_INVALID_REFERENCE;
    if (module == nullptr) return VX_ERROR_INVALID_PARAMETERS;
    auto found = registered_libraries().find(module);
    if (found == registered_libraries().end()) return VX_ERROR_INVALID_PARAMETERS;
    return found->second.unpublish != nullptr ? found->second.unpublish(c) : VX_SUCCESS;
  });
}
