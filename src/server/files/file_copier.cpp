#include "server/files/file_copier.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "common/file_io.hpp"
#include "common/log.hpp"
#include "common/thread_name.hpp"
#include "server/transport/staging.hpp"

namespace ferry::server {
namespace {

std::string system_error(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

/// A block's staging and the device copy that uses it.
struct block {
  staging_ptr data;
  cl_event copy = nullptr;
};

/// Waits for a block's copy and lets it go: CL_COMPLETE, or its (negative)
/// status, or CL_OUT_OF_RESOURCES when it cannot be asked.
cl_int settle(const native::api& api, block& b) {
  if (b.copy == nullptr) return CL_COMPLETE;
  cl_int status = CL_COMPLETE;
  if (api.clWaitForEvents(1, &b.copy) != CL_SUCCESS ||
      api.clGetEventInfo(b.copy, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) != CL_SUCCESS)
    status = CL_OUT_OF_RESOURCES;
  api.clReleaseEvent(std::exchange(b.copy, nullptr));
  return status;
}

}  // namespace

file_copier::file_copier(const native::api& api, std::shared_ptr<const file_root> root, std::string session_label)
    : api_(api), root_(std::move(root)), label_(std::move(session_label)), thread_([this] { run(); }) {}

file_copier::~file_copier() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  ready_.notify_all();
  thread_.join();
}

void file_copier::post(file_job job) {
  {
    std::lock_guard lock(mutex_);
    jobs_.push_back(std::move(job));
  }
  ready_.notify_one();
}

void file_copier::end(const native::api& api, file_job& job, cl_int status) {
  if (job.outcome) job.outcome->store(status, std::memory_order_release);
  if (job.buffer) api.clReleaseMemObject(std::exchange(job.buffer, nullptr));
  if (job.gate) {
    // Never a failure: the outcome is the command's alone (see the header).
    api.clSetUserEventStatus(job.gate, CL_COMPLETE);
    api.clReleaseEvent(std::exchange(job.gate, nullptr));
  }
}

void file_copier::run() {
  name_this_thread("files");
  for (;;) {
    file_job job;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
      if (jobs_.empty()) break;  // stopping, and every job has run
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    result r = transfer(job);
    if (r.status != CL_COMPLETE) {
      FERRY_WARN("files", "session %s: command %llu (%s '%s'): %s (%d)", label_.c_str(),
                 static_cast<unsigned long long>(job.command),
                 job.direction == file_job::way::file_to_buffer ? "file to buffer" : "buffer to file",
                 job.path.c_str(), r.cause.c_str(), r.status);
    }
    end(api_, job, r.status);
  }
  for (auto& [key, queue] : queues_) api_.clReleaseCommandQueue(queue);
}

cl_command_queue file_copier::queue_for(const file_job& job, cl_int& error) {
  auto key = std::make_pair(job.context, job.device);
  if (auto it = queues_.find(key); it != queues_.end()) return it->second;
  cl_command_queue queue = api_.clCreateCommandQueueWithProperties(job.context, job.device, nullptr, &error);
  if (queue == nullptr) return nullptr;
  queues_.emplace(key, queue);
  return queue;
}

file_copier::result file_copier::transfer(const file_job& job) {
  const bool reading = job.direction == file_job::way::file_to_buffer;
  file_root::opened file = root_->open(job.path, reading ? file_root::access::read : file_root::access::write);
  if (file.status != CL_SUCCESS) return {file.status, file.cause};
  if (job.size == 0) return {};
  cl_int error = CL_SUCCESS;
  cl_command_queue queue = queue_for(job, error);
  if (queue == nullptr) return {error, "no queue for the device copies"};
  return reading ? file_to_buffer(job, file.fd.get(), queue) : buffer_to_file(job, file.fd.get(), queue);
}

file_copier::result file_copier::file_to_buffer(const file_job& job, int fd, cl_command_queue queue) {
  const uint64_t each = std::min(block_bytes, job.size);
  std::array<block, blocks_in_flight> blocks;
  result r;
  // Waits for a block's copy; the first failure is the job's.
  auto written = [&](block& b) {
    const cl_int status = settle(api_, b);
    if (status < 0 && r.status == CL_COMPLETE) r = {status, "writing the buffer"};
  };
  uint64_t at = 0;
  for (size_t i = 0; at < job.size && r.status == CL_COMPLETE; ++i) {
    block& b = blocks[i % blocks.size()];
    written(b);
    if (r.status != CL_COMPLETE) break;
    if (!b.data) b.data.reset(acquire_staging(each));
    if (!b.data) {
      r = {CL_OUT_OF_HOST_MEMORY, "no staging for a block"};
      break;
    }
    const uint64_t want = std::min(each, job.size - at);
    const ssize_t got = read_at(fd, b.data.get(), static_cast<size_t>(want), job.file_offset + at);
    if (got < 0) {
      r = {CL_OUT_OF_RESOURCES, system_error("reading the file")};
      break;
    }
    // What was read is written even when the file ends early.
    if (got > 0) {
      cl_int rc = api_.clEnqueueWriteBuffer(queue, job.buffer, CL_FALSE, static_cast<size_t>(job.offset + at),
                                            static_cast<size_t>(got), b.data.get(), 0, nullptr, &b.copy);
      if (rc != CL_SUCCESS) {
        r = {rc, "writing the buffer"};
        break;
      }
      api_.clFlush(queue);
    }
    at += static_cast<uint64_t>(got);
    if (static_cast<uint64_t>(got) < want)
      r = {CL_INVALID_VALUE,
           "the file ended after " + std::to_string(at) + " of " + std::to_string(job.size) + " bytes"};
  }
  for (block& b : blocks) written(b);
  return r;
}

file_copier::result file_copier::buffer_to_file(const file_job& job, int fd, cl_command_queue queue) {
  const uint64_t each = std::min(block_bytes, job.size);
  const uint64_t count = (job.size + each - 1) / each;
  std::array<block, blocks_in_flight> blocks;
  result r;
  // Enqueues the read of block `i` into its staging.
  auto start = [&](uint64_t i) {
    block& b = blocks[i % blocks.size()];
    if (!b.data) b.data.reset(acquire_staging(each));
    if (!b.data) {
      r = {CL_OUT_OF_HOST_MEMORY, "no staging for a block"};
      return;
    }
    const uint64_t at = i * each;
    cl_int rc = api_.clEnqueueReadBuffer(queue, job.buffer, CL_FALSE, static_cast<size_t>(job.offset + at),
                                         static_cast<size_t>(std::min(each, job.size - at)), b.data.get(), 0,
                                         nullptr, &b.copy);
    if (rc != CL_SUCCESS) r = {rc, "reading the buffer"};
    else api_.clFlush(queue);
  };
  for (uint64_t i = 0; i < count && i < blocks.size() && r.status == CL_COMPLETE; ++i) start(i);
  for (uint64_t i = 0; i < count && r.status == CL_COMPLETE; ++i) {
    block& b = blocks[i % blocks.size()];
    if (const cl_int status = settle(api_, b); status < 0) {
      r = {status, "reading the buffer"};
      break;
    }
    const uint64_t at = i * each;
    if (!write_at(fd, b.data.get(), static_cast<size_t>(std::min(each, job.size - at)), job.file_offset + at)) {
      r = {CL_OUT_OF_RESOURCES, system_error("writing the file")};
      break;
    }
    if (i + blocks.size() < count) start(i + blocks.size());
  }
  // Reads still in flight after a failure land in staging nobody reads.
  for (block& b : blocks) settle(api_, b);
  return r;
}

}  // namespace ferry::server
