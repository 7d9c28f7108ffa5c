/* Ferry's OpenCL extension API (C).
 *
 * Functions are reached through clGetExtensionFunctionAddressForPlatform on the
 * Ferry platform (or clGetExtensionFunctionAddress); nothing here is exported
 * directly, so programs keep working on any other OpenCL implementation. */
#ifndef CL_EXT_FERRY_H
#define CL_EXT_FERRY_H

#include <CL/cl.h>

#ifdef __cplusplus
extern "C" {
#endif

#define cl_ferry_remote 1
#define CL_FERRY_REMOTE_EXTENSION_NAME "cl_ferry_remote"

/* Name of Ferry's platform (CL_PLATFORM_NAME). */
#define CL_FERRY_PLATFORM_NAME "Ferry"

/* clGetDeviceInfo: the address of the server that hosts the device, as the
 * client reached it ("host:port" or "unix:/path"). Type: char[]. */
#define CL_DEVICE_FERRY_SERVER_ADDRESS 0x4F00
/* clGetDeviceInfo: the index of the device among the server's devices. Type: cl_uint. */
#define CL_DEVICE_FERRY_SERVER_DEVICE_INDEX 0x4F01

/* Measures one empty request/response round trip to the server that hosts
 * `device` and stores it in nanoseconds. Returns CL_INVALID_DEVICE for a
 * device that is not Ferry's, CL_INVALID_VALUE for a NULL result pointer,
 * CL_DEVICE_NOT_AVAILABLE when the server cannot be reached. */
typedef cl_int(CL_API_CALL *clFerryPingServer_fn)(cl_device_id device, cl_ulong *round_trip_ns);

/* Counts of live objects, for leak checks in tests and tools. */
typedef struct cl_ferry_object_counts {
  cl_ulong client_objects; /* Ferry objects alive in this process (all servers) */
  cl_ulong server_objects; /* native objects alive in this process's session on the device's server */
} cl_ferry_object_counts;

/* Fills `counts` for the server that hosts `device`. The server figure is
 * measured after every command sent before the call has been processed. */
typedef cl_int(CL_API_CALL *clFerryGetObjectCounts_fn)(cl_device_id device,
                                                       cl_ferry_object_counts *counts);

#ifdef __cplusplus
}
#endif

#endif /* CL_EXT_FERRY_H */
