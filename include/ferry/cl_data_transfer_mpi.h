/* The transfer commands with their MPI functions: <mpi.h>, then
 * <ferry/cl_data_transfer.h> with everything declared. */
#ifndef FERRY_CL_DATA_TRANSFER_MPI_H
#define FERRY_CL_DATA_TRANSFER_MPI_H

#include <mpi.h>

#define FERRY_CL_DATA_TRANSFER_MPI 1
#include <ferry/cl_data_transfer.h>

#endif /* FERRY_CL_DATA_TRANSFER_MPI_H */
