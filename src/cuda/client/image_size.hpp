// How many bytes a module image given to cuModuleLoadData is. The driver API
// passes images by pointer alone; NVIDIA's driver reads the format's own
// header, and so must a driver that sends the image to a server.
#pragma once

#include <cstddef>

namespace ferry::cuda {

/// The size of the image at `image`: an ELF cubin (from its section and
/// program header tables and the sections they describe), a fatbin (its
/// header's size), otherwise NUL-terminated text (PTX) with its NUL. 0 for
/// a null pointer or a header that makes no sense.
size_t module_image_size(const void* image);

}  // namespace ferry::cuda
