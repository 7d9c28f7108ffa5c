// Images and samplers: creation and the image enqueues.
//
// Host data of image transfers travels packed (no row or slice padding), so
// the daemon passes pitches of 0 and the native implementation computes the
// packed pitches itself. The byte count of every transfer is checked against
// the image's element size, which the daemon asks the native image for at
// creation: a client cannot make a read overrun its staging buffer.
#include <cstring>

#include "common/log.hpp"
#include "server/commands/executor.hpp"
#include "server/commands/executor_inline.hpp"
#include "server/transport/staging.hpp"

namespace ferry::server {

namespace p = protocol;

namespace {

/// The creation properties as the native call takes them (NULL when none).
template <class Property>
const Property* properties_or_null(const std::vector<uint64_t>& in, std::vector<Property>& out) {
  if (in.empty()) return nullptr;
  out.assign(in.begin(), in.end());
  if (out.back() != 0) out.push_back(0);  // always terminated, whatever the client sent
  return out.data();
}

/// Packed bytes of `region` of an image with `element_size` bytes per pixel;
/// false when it overflows or the element size is unknown.
bool packed_image_bytes(uint64_t element_size, const p::size3& region, uint64_t& out) {
  uint64_t pixels;
  return element_size != 0 && region_bytes(region, pixels) && detail::multiply(pixels, element_size, out);
}

size_t element_size_of(const native::api& api, cl_mem image) {
  size_t element = 0;
  if (api.clGetImageInfo(image, CL_IMAGE_ELEMENT_SIZE, sizeof element, &element, nullptr) != CL_SUCCESS) return 0;
  return element;
}

}  // namespace

bool executor::on(const p::create_image& m) {
  if (duplicate(m.id)) return false;
  // A refused creation leaves no entry: the client made no object that
  // would release it.
  auto refuse = [&](cl_int error) { return answer(p::status_reply{m.request, error, {}}); };
  // Before the contents come: they are dropped.
  auto refuse_early = [&](cl_int error) {
    if (m.initial_transfer) core_->transfers.abandon(m.initial_transfer);
    return refuse(error);
  };
  object_table::found context = objects_.find<object_kind::context>(m.context);
  if (!context) return refuse_early(context.error());
  cl_mem buffer = nullptr;
  if (m.buffer != 0) {
    // Whatever the id names (even a failed creation), the descriptor names no buffer.
    object_table::found entry = objects_.find<object_kind::mem>(m.buffer);
    if (!entry) return refuse_early(CL_INVALID_IMAGE_DESCRIPTOR);
    buffer = entry->as_mem();
  }
  if (cl_int refused = admit_objects(); refused != CL_SUCCESS) return refuse_early(refused);
  cl_image_format format{m.channel_order, m.channel_data_type};
  cl_image_desc desc{};
  desc.image_type = m.image_type;
  desc.image_width = static_cast<size_t>(m.width);
  desc.image_height = static_cast<size_t>(m.height);
  desc.image_depth = static_cast<size_t>(m.depth);
  desc.image_array_size = static_cast<size_t>(m.array_size);
  desc.image_row_pitch = static_cast<size_t>(m.row_pitch);
  desc.image_slice_pitch = static_cast<size_t>(m.slice_pitch);
  desc.num_mip_levels = m.num_mip_levels;
  desc.num_samples = m.num_samples;
  desc.mem_object = buffer;
  std::vector<cl_mem_properties> properties;
  const cl_mem_properties* props = properties_or_null(m.properties, properties);
  // As for buffers (see daemon_ignored_flags): a native image that refused
  // the daemon's own reads would fail every map of a CL_MEM_HOST_WRITE_ONLY
  // image, which fetches the region it shows.
  cl_mem_flags flags = m.flags & ~daemon_ignored_flags;
  cl_context native_context = context->as_context();
  cl_int error;
  cl_mem image = nullptr;
  if (m.initial_transfer) {
    // The packed size follows from the format, which only the native
    // implementation judges; the transfer's own total is checked against
    // the image's element size once it exists.
    uint8_t* data = nullptr;
    uint64_t total = 0;
    flush_touched();
    cl_int dropped = CL_SUCCESS;
    if (!core_->transfers.wait_complete(m.initial_transfer, data, total, dropped)) {
      stop_requested_ = true;
      return violate("session closing, or its connection lost past the grace period, while image " + std::to_string(m.id) +
                     " waited for its contents");
    }
    // The quota refused the contents as they came.
    if (dropped != CL_SUCCESS) return refuse(dropped);
    desc.image_row_pitch = 0;
    desc.image_slice_pitch = 0;
    // Create empty first: copying from `data` before knowing that it holds
    // the whole image could read past its end.
    image = api_.clCreateImageWithProperties(native_context, props, flags, &format, &desc, nullptr, &error);
    if (image != nullptr) {
      uint64_t layers = m.image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY || m.image_type == CL_MEM_OBJECT_IMAGE2D_ARRAY
                            ? m.array_size
                            : 1;
      uint64_t height = m.image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? 1 : std::max<uint64_t>(m.height, 1);
      uint64_t depth = m.image_type == CL_MEM_OBJECT_IMAGE3D ? m.depth : 1;
      uint64_t expected = 0;
      bool sized =
          packed_image_bytes(element_size_of(api_, image), p::size3{m.width, height, depth * layers}, expected);
      if (!sized || expected != total) {
        // The client packs by the spec's element sizes; a format whose
        // native size differs cannot take host data this way.
        FERRY_WARN("session", "session %s: initial contents of %llu bytes for image %llu that holds %llu; refused",
                   core_->label.c_str(), static_cast<unsigned long long>(total),
                   static_cast<unsigned long long>(m.id), static_cast<unsigned long long>(expected));
        api_.clReleaseMemObject(image);
        core_->transfers.erase(m.initial_transfer);
        return refuse(CL_IMAGE_FORMAT_NOT_SUPPORTED);
      }
      // The image is new and private to this session: a blocking write on a
      // temporary queue would need a device; clCreateImage with COPY_HOST_PTR
      // does the same in one step, now that the size is known to be right.
      api_.clReleaseMemObject(image);
      image = api_.clCreateImageWithProperties(native_context, props, flags | CL_MEM_COPY_HOST_PTR, &format, &desc,
                                               data, &error);
    }
    core_->transfers.erase(m.initial_transfer);
  } else {
    image = api_.clCreateImageWithProperties(native_context, props, flags, &format, &desc, nullptr, &error);
  }
  if (image == nullptr) return refuse(error);
  auto entry = object_entry::native(object_kind::mem, image, native_context);
  entry.element_size = element_size_of(api_, image);
  // Only the native image knows its element size, so the memory quota is
  // weighed once it exists. An image over a buffer allocates nothing new.
  if (buffer == nullptr) {
    uint64_t layers = m.image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY || m.image_type == CL_MEM_OBJECT_IMAGE2D_ARRAY
                          ? std::max<uint64_t>(m.array_size, 1)
                          : 1;
    p::size3 extent{m.width, std::max<uint64_t>(m.height, 1), std::max<uint64_t>(m.depth, 1) * layers};
    if (!packed_image_bytes(entry.element_size, extent, entry.device_bytes)) entry.device_bytes = UINT64_MAX;
    if (cl_int refused = core_->quota.admit_memory(objects_.memory(), entry.device_bytes); refused != CL_SUCCESS) {
      api_.clReleaseMemObject(image);
      return refuse(refused);
    }
  }
  // entry.size stays 0: the buffer commands' bounds checks then refuse an
  // image id, as the native API would.
  objects_.insert(m.id, entry);
  // The native element size lets the client pack host data exactly.
  return answer(p::status_reply{m.request, CL_SUCCESS, {static_cast<int32_t>(entry.element_size)}});
}

bool executor::on(const p::create_sampler& m) {
  if (duplicate(m.id)) return false;
  // No entry on a refusal: the client made no object (see create_image).
  // Over the session's object quota, the quota's error.
  object_table::found context = find_for_creation<object_kind::context>(m.context);
  if (!context) return answer(p::status_reply{m.request, context.error(), {}});
  std::vector<cl_sampler_properties> properties;
  cl_int error;
  cl_sampler sampler =
      api_.clCreateSamplerWithProperties(context->as_context(), properties_or_null(m.properties, properties), &error);
  if (sampler == nullptr) return answer(p::status_reply{m.request, error, {}});
  objects_.insert(m.id, object_entry::native(object_kind::sampler, sampler, context->as_context()));
  return answer(p::status_reply{m.request, CL_SUCCESS, {}});
}

bool executor::on(const p::enqueue_write_image& m) {
  const std::optional<uint64_t> transfer = bulk_transfer(m.header, m.size);
  const object_entry *queue, *image;
  if (step s = prepare_write(m.header, transfer, m.image, queue, image); s != step::go) return s == step::failed;
  uint64_t expected = 0;
  if (!packed_image_bytes(image->element_size, m.region, expected) || expected != m.size || m.size == 0)
    return fail_write(m.header, transfer, CL_INVALID_VALUE);
  const native_size3 origin(m.origin), region(m.region);
  cl_command_queue q = queue->as_queue();
  cl_mem target = image->as_mem();
  return write_from_bulk(m.header, *queue, m.size, [&](const uint8_t* data, cl_event* event) {
    return api_.clEnqueueWriteImage(q, target, CL_FALSE, origin, region, 0, 0, data, wait_count(), wait_events(),
                                    event);
  });
}

bool executor::on(const p::enqueue_read_image& m) {
  const object_entry* queue;
  if (step s = prepare(m.header, queue); s != step::go) return s == step::failed;
  object_table::found image = objects_.find<object_kind::mem>(m.image);
  if (!image) return fail(m.header, image.error());
  uint64_t expected = 0;
  if (!packed_image_bytes(image->element_size, m.region, expected) || expected != m.size || m.size == 0)
    return fail(m.header, CL_INVALID_VALUE);
  const native_size3 origin(m.origin), region(m.region);
  return read_to_bulk(m.header, *queue, m.size, [&](uint8_t* staging, cl_event* event) {
    return api_.clEnqueueReadImage(queue->as_queue(), image->as_mem(), CL_FALSE, origin, region, 0, 0, staging,
                                   wait_count(), wait_events(), event);
  });
}

bool executor::on(const p::enqueue_copy_image& m) {
  const native_size3 source_origin(m.source_origin), destination_origin(m.destination_origin), region(m.region);
  return enqueue_on_mems(m.header, {m.source, m.destination}, [&](cl_command_queue queue, auto& mem, cl_event* event) {
    return api_.clEnqueueCopyImage(queue, mem[0], mem[1], source_origin, destination_origin, region, wait_count(),
                                   wait_events(), event);
  });
}

bool executor::on(const p::enqueue_fill_image& m) {
  const native_size3 origin(m.origin), region(m.region);
  return enqueue_on_mems(m.header, {m.image}, [&](cl_command_queue queue, auto& mem, cl_event* event) {
    return api_.clEnqueueFillImage(queue, mem[0], m.color.data(), origin, region, wait_count(), wait_events(), event);
  });
}

bool executor::on(const p::enqueue_copy_image_to_buffer& m) {
  const native_size3 origin(m.origin), region(m.region);
  return enqueue_on_mems(m.header, {m.image, m.buffer}, [&](cl_command_queue queue, auto& mem, cl_event* event) {
    return api_.clEnqueueCopyImageToBuffer(queue, mem[0], mem[1], origin, region, static_cast<size_t>(m.offset),
                                           wait_count(), wait_events(), event);
  });
}

bool executor::on(const p::enqueue_copy_buffer_to_image& m) {
  const native_size3 origin(m.origin), region(m.region);
  return enqueue_on_mems(m.header, {m.buffer, m.image}, [&](cl_command_queue queue, auto& mem, cl_event* event) {
    return api_.clEnqueueCopyBufferToImage(queue, mem[0], mem[1], static_cast<size_t>(m.offset), origin, region,
                                           wait_count(), wait_events(), event);
  });
}

}  // namespace ferry::server
