// File transfer commands (libferry_transfer, docs/transfer.md) against doing the same by
// hand: for 4 MiB, 64 MiB, 256 MiB and 1 GiB (or one size, --size)
//   file -> buffer   serial: fread into host memory, then a blocking clEnqueueWriteBuffer
//                    pipelined: clEnqueueWriteBufferFromStdioFile
//   buffer -> file   serial: a blocking clEnqueueReadBuffer, then fwrite (and fflush)
//                    pipelined: clEnqueueReadBufferToStdioFile
//   both ways        server file: clEnqueueWriteBufferFromFileFERRY and
//                    clEnqueueReadBufferToFileFERRY with CL_FERRY_FILE_ON_SERVER (through
//                    Ferry the daemon moves the bytes between its disk and the device, the
//                    client sees none; natively the library opens the path on this host)
// and beside them the plain fread of the file into host memory, the ceiling of a read.
// The daemon this benchmark starts serves the scratch directory (--file-root); with
// FERRY_SERVERS set, FERRY_BENCH_FILE_ROOT names the root of those servers (on this host),
// and the files go into a directory below it (without it, no server-file figures).
// The file is a real file written once per size in a scratch directory (TMPDIR, else
// /var/tmp), whose file system is printed; it is read again and again, so it is in the
// page cache: the figures are the page cache's, not the disk's.
// FERRY_TRANSFER_BLOCK (read once per process) forces the library's block size.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "bench_common.hpp"
#include "ferry/cl_data_transfer.h"

namespace {

using namespace ferry::bench;

struct size_case {
  size_t bytes;
  std::string name;
  int default_repeats;
};

std::vector<size_case> default_cases() {
  return {{size_t{4} << 20, "4MiB", 10}, {size_t{64} << 20, "64MiB", 5}, {size_t{256} << 20, "256MiB", 3},
          {size_t{1} << 30, "1GiB", 3}};
}

/// The kind of file system `path` lives on, by its magic number.
std::string file_system_of(const std::string& path) {
  struct statfs fs {};
  if (::statfs(path.c_str(), &fs) != 0) return "unknown";
  switch (static_cast<unsigned long>(fs.f_type)) {
    case 0xEF53: return "ext4";
    case 0x01021994: return "tmpfs";
    case 0x58465342: return "xfs";
    case 0x9123683E: return "btrfs";
    case 0x794c7630: return "overlayfs";
    default: return "f_type 0x" + [&] {
      char hex[32];
      std::snprintf(hex, sizeof hex, "%lx", static_cast<unsigned long>(fs.f_type));
      return std::string(hex);
    }();
  }
}

/// A scratch directory with one source file per size, removed at the end.
class scratch_files {
 public:
  /// Under `root` (a server's --file-root) when given, else under TMPDIR (or /var/tmp),
  /// which then is the root of the daemon this benchmark starts.
  explicit scratch_files(const std::string& root) {
    const char* base = std::getenv("TMPDIR");
    const std::string parent = !root.empty() ? root : std::string(base && *base ? base : "/var/tmp");
    std::string pattern = parent + "/ferry-bench-transfer-XXXXXX";
    // 0777: the daemon's session workers (nobody under root) read and write here.
    if (::mkdtemp(pattern.data()) == nullptr || ::chmod(pattern.c_str(), 0777) != 0)
      throw bench_error("cannot make a directory under " + parent);
    dir_ = pattern;
    root_ = root.empty() ? dir_ : root;
  }
  ~scratch_files() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  scratch_files(const scratch_files&) = delete;
  scratch_files& operator=(const scratch_files&) = delete;
  const std::string& dir() const { return dir_; }
  std::string source(const size_case& c) const { return dir_ + "/source-" + c.name; }
  std::string output() const { return dir_ + "/output"; }
  /// The directory a server that holds these files serves.
  const std::string& root() const { return root_; }
  /// `path` (in dir()) as a command for a file on the server names it: below the root.
  std::string below_root(const std::string& path) const { return path.substr(root_.size() + 1); }

  /// Writes the source file of `c` (a pattern that differs from block to block).
  void write_source(const size_case& c) const {
    std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(source(c).c_str(), "wb"), &std::fclose);
    if (!f) throw bench_error("cannot create " + source(c));
    std::vector<unsigned char> chunk(size_t{8} << 20);
    for (size_t at = 0; at < c.bytes; at += chunk.size()) {
      const size_t n = std::min(chunk.size(), c.bytes - at);
      for (size_t i = 0; i < n; ++i) chunk[i] = static_cast<unsigned char>((at + i) * 13 + ((at + i) >> 16));
      if (std::fwrite(chunk.data(), 1, n, f.get()) != n) throw bench_error("cannot write " + source(c));
    }
  }

 private:
  std::string dir_;
  std::string root_;
};

using file_handle = std::unique_ptr<FILE, int (*)(FILE*)>;
file_handle open_or_throw(const std::string& path, const char* mode) {
  file_handle f(std::fopen(path.c_str(), mode), &std::fclose);
  if (!f) throw bench_error("cannot open " + path);
  return f;
}

void read_exactly(FILE* f, unsigned char* into, size_t bytes) {
  if (std::fread(into, 1, bytes, f) != bytes) throw bench_error("short read of the source file");
}

/// MB/s of `bytes` moved in `seconds`.
double mb_s(size_t bytes, double seconds) { return static_cast<double>(bytes) / seconds / 1e6; }

/// The five figures of one size on one target, one value per repeat each.
struct figures {
  std::vector<double> file_read, serial_to_buffer, pipelined_to_buffer, serial_to_file, pipelined_to_file;
  std::vector<double> server_to_buffer, server_to_file;  // empty: not measured
};

figures measure_size(target& t, const scratch_files& files, const size_case& c, int repeats, bool server_files) {
  // A server's file is named below its root; natively "the server" is this host.
  const bool ferry = t.label == "ferry";
  auto server_path = [&](const std::string& path) { return ferry ? files.below_root(path) : path; };
  host_bytes host = allocate_host(c.bytes), copy = allocate_host(c.bytes);
  std::memset(host.get(), 0, c.bytes);  // no first-touch page faults inside the timings
  const mem_object buffer(t.context, CL_MEM_READ_WRITE, c.bytes);
  const cl_mem mem = buffer.get();
  figures out;

  // Warm-up that proves the bytes: pipelined both ways, compared with a plain read.
  {
    file_handle in = open_or_throw(files.source(c), "rb");
    read_exactly(in.get(), host.get(), c.bytes);
    std::rewind(in.get());
    check(clEnqueueWriteBufferFromStdioFile(t.queue, mem, CL_TRUE, 0, c.bytes, in.get(), 0, nullptr, nullptr),
          "clEnqueueWriteBufferFromStdioFile");
    check(clEnqueueReadBuffer(t.queue, mem, CL_TRUE, 0, c.bytes, copy.get(), 0, nullptr, nullptr),
          "clEnqueueReadBuffer");
    if (std::memcmp(host.get(), copy.get(), c.bytes) != 0)
      throw bench_error("wrong result: " + c.name + " file -> buffer differs from the file");
    file_handle outf = open_or_throw(files.output(), "wb");
    check(clEnqueueReadBufferToStdioFile(t.queue, mem, CL_TRUE, 0, c.bytes, outf.get(), 0, nullptr, nullptr),
          "clEnqueueReadBufferToStdioFile");
    outf.reset();
    file_handle back = open_or_throw(files.output(), "rb");
    read_exactly(back.get(), copy.get(), c.bytes);
    if (std::memcmp(host.get(), copy.get(), c.bytes) != 0)
      throw bench_error("wrong result: " + c.name + " buffer -> file differs from the buffer");
    if (server_files) {
      const cl_uchar zero = 0;  // so that the check below sees the file's bytes arrive
      check(clEnqueueFillBuffer(t.queue, mem, &zero, 1, 0, c.bytes, 0, nullptr, nullptr), "clEnqueueFillBuffer");
      check(clEnqueueWriteBufferFromFileFERRY(t.queue, mem, CL_TRUE, 0, c.bytes, server_path(files.source(c)).c_str(),
                                              0, CL_FERRY_FILE_ON_SERVER, 0, nullptr, nullptr),
            "clEnqueueWriteBufferFromFileFERRY");
      check(clEnqueueReadBuffer(t.queue, mem, CL_TRUE, 0, c.bytes, copy.get(), 0, nullptr, nullptr),
            "clEnqueueReadBuffer");
      if (std::memcmp(host.get(), copy.get(), c.bytes) != 0)
        throw bench_error("wrong result: " + c.name + " server file -> buffer differs from the file");
      std::filesystem::remove(files.output());
      check(clEnqueueReadBufferToFileFERRY(t.queue, mem, CL_TRUE, 0, c.bytes, server_path(files.output()).c_str(), 0,
                                           CL_FERRY_FILE_ON_SERVER, 0, nullptr, nullptr),
            "clEnqueueReadBufferToFileFERRY");
      file_handle back = open_or_throw(files.output(), "rb");
      read_exactly(back.get(), copy.get(), c.bytes);
      if (std::memcmp(host.get(), copy.get(), c.bytes) != 0)
        throw bench_error("wrong result: " + c.name + " buffer -> server file differs from the buffer");
    }
  }

  for (int r = 0; r < repeats; ++r) {
    {
      file_handle in = open_or_throw(files.source(c), "rb");
      auto start = clock::now();
      read_exactly(in.get(), host.get(), c.bytes);
      out.file_read.push_back(mb_s(c.bytes, seconds_since(start)));
    }
    {
      file_handle in = open_or_throw(files.source(c), "rb");
      auto start = clock::now();
      read_exactly(in.get(), host.get(), c.bytes);
      check(clEnqueueWriteBuffer(t.queue, mem, CL_TRUE, 0, c.bytes, host.get(), 0, nullptr, nullptr),
            "clEnqueueWriteBuffer");
      // Until the bytes are in the buffer (a blocking write may return once they are sent).
      check(clFinish(t.queue), "clFinish");
      out.serial_to_buffer.push_back(mb_s(c.bytes, seconds_since(start)));
    }
    {
      file_handle in = open_or_throw(files.source(c), "rb");
      auto start = clock::now();
      check(clEnqueueWriteBufferFromStdioFile(t.queue, mem, CL_TRUE, 0, c.bytes, in.get(), 0, nullptr, nullptr),
            "clEnqueueWriteBufferFromStdioFile");
      check(clFinish(t.queue), "clFinish");
      out.pipelined_to_buffer.push_back(mb_s(c.bytes, seconds_since(start)));
    }
    {
      file_handle outf = open_or_throw(files.output(), "wb");
      auto start = clock::now();
      check(clEnqueueReadBuffer(t.queue, mem, CL_TRUE, 0, c.bytes, host.get(), 0, nullptr, nullptr),
            "clEnqueueReadBuffer");
      if (std::fwrite(host.get(), 1, c.bytes, outf.get()) != c.bytes || std::fflush(outf.get()) != 0)
        throw bench_error("cannot write " + files.output());
      out.serial_to_file.push_back(mb_s(c.bytes, seconds_since(start)));
    }
    {
      file_handle outf = open_or_throw(files.output(), "wb");
      auto start = clock::now();
      check(clEnqueueReadBufferToStdioFile(t.queue, mem, CL_TRUE, 0, c.bytes, outf.get(), 0, nullptr, nullptr),
            "clEnqueueReadBufferToStdioFile");
      out.pipelined_to_file.push_back(mb_s(c.bytes, seconds_since(start)));
    }
    if (server_files) {
      auto start = clock::now();
      check(clEnqueueWriteBufferFromFileFERRY(t.queue, mem, CL_TRUE, 0, c.bytes, server_path(files.source(c)).c_str(),
                                              0, CL_FERRY_FILE_ON_SERVER, 0, nullptr, nullptr),
            "clEnqueueWriteBufferFromFileFERRY");
      check(clFinish(t.queue), "clFinish");
      out.server_to_buffer.push_back(mb_s(c.bytes, seconds_since(start)));
      start = clock::now();
      check(clEnqueueReadBufferToFileFERRY(t.queue, mem, CL_TRUE, 0, c.bytes, server_path(files.output()).c_str(), 0,
                                           CL_FERRY_FILE_ON_SERVER, 0, nullptr, nullptr),
            "clEnqueueReadBufferToFileFERRY");
      out.server_to_file.push_back(mb_s(c.bytes, seconds_since(start)));
    }
  }
  return out;
}

void print_size(const target& t, const size_case& c, const figures& f, int repeats) {
  const double file = median(f.file_read), serial_in = median(f.serial_to_buffer),
               piped_in = median(f.pipelined_to_buffer), serial_out = median(f.serial_to_file),
               piped_out = median(f.pipelined_to_file);
  for (auto [key, value] : {std::pair{"file_read", file}, std::pair{"to_buffer_serial", serial_in},
                            std::pair{"to_buffer_pipelined", piped_in}, std::pair{"to_file_serial", serial_out},
                            std::pair{"to_file_pipelined", piped_out}})
    results::instance().record(t.label, std::string(key) + "_" + c.name + "_mb_s", value);
  std::string server_in, server_out;
  if (!f.server_to_buffer.empty()) {
    const double in = median(f.server_to_buffer), out = median(f.server_to_file);
    results::instance().record(t.label, "to_buffer_server_file_" + c.name + "_mb_s", in);
    results::instance().record(t.label, "to_file_server_file_" + c.name + "_mb_s", out);
    server_in = " server_file_mb_s=" + format(in) + " server_file_of_file_read=" + format(in / file, 2);
    server_out = " server_file_mb_s=" + format(out);
  }
  const std::string size = "size=" + std::to_string(c.bytes);
  print_line("transfer_file", t.label,
             "file_to_buffer " + size + " file_read_mb_s=" + format(file) + " serial_mb_s=" + format(serial_in) +
                 " pipelined_mb_s=" + format(piped_in) + " pipelined_of_file_read=" + format(piped_in / file, 2) +
                 server_in + " repeats=" + std::to_string(repeats));
  print_line("transfer_file", t.label,
             "buffer_to_file " + size + " serial_mb_s=" + format(serial_out) + " pipelined_mb_s=" +
                 format(piped_out) + server_out + " repeats=" + std::to_string(repeats));
}

}  // namespace

int main(int argc, char** argv) {
  bench_info info{"transfer_file",
                  "MB/s of file -> buffer and buffer -> file: serial (fread + clEnqueueWriteBuffer, "
                  "clEnqueueReadBuffer + fwrite) against the transfer commands and files on the server, beside a "
                  "plain fread.",
                  -1, "rounds per size (default 10 / 5 / 3 / 3 for 4 MiB / 64 MiB / 256 MiB / 1 GiB)"};
  info.takes_size = true;
  info.size_meaning = "bytes of one size to measure instead of 4 MiB, 64 MiB, 256 MiB and 1 GiB";
  const options opts = parse_options(argc, argv, info);
  std::vector<size_case> cases = default_cases();
  if (opts.size > 0) cases = {{opts.size, size_label(opts.size), 3}};

  try {
    // Servers this benchmark does not start serve files from FERRY_BENCH_FILE_ROOT, if any.
    const char* servers = std::getenv("FERRY_SERVERS");
    const char* given_root = std::getenv("FERRY_BENCH_FILE_ROOT");
    const bool external = servers != nullptr && *servers != '\0';
    const bool server_files = !external || (given_root != nullptr && *given_root != '\0');
    scratch_files files(external && server_files ? given_root : "");
    if (!external) info.daemon_args = {"--file-root", files.root()};
    const char* forced = std::getenv("FERRY_TRANSFER_BLOCK");
    std::fprintf(stderr, "ferry_bench_transfer_file: files in %s (%s; read again and again, so from the page cache)%s%s\n",
                 files.dir().c_str(), file_system_of(files.dir()).c_str(),
                 forced ? ", FERRY_TRANSFER_BLOCK=" : "", forced ? forced : "");
    for (const size_case& c : cases) files.write_source(c);
    session s(opts, info);
    return s.run([&](target& t) {
      for (const size_case& c : cases) {
        const int repeats = opts.repeats > 0 ? opts.repeats : c.default_repeats;
        print_size(t, c, measure_size(t, files, c, repeats, server_files), repeats);
      }
    });
  } catch (const bench_error& e) {
    std::fprintf(stderr, "ferry_bench_transfer_file: %s\n", e.what());
    return 1;
  }
}
