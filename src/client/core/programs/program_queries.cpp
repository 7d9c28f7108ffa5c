#include "client/core/programs/program_queries.hpp"

#include "client/core/remote_query.hpp"
#include "client/core/servers/server.hpp"
#include "protocol/codec.hpp"

namespace ferry::client {

result<protocol::bytes> program_info_from_server(const program* p, cl_uint param) {
  return ask_server(link_of(p), {protocol::query_kind::program_info, p, nullptr, param, 0, {}});
}

result<protocol::bytes> program_build_info_from_server(const program* p, const device* d, cl_uint param) {
  return ask_server(link_of(p), {protocol::query_kind::program_build_info, p, d, param, 0, {}});
}

result<std::vector<protocol::bytes>> program_binaries(const program* p) {
  auto answer = program_info_from_server(p, CL_PROGRAM_BINARIES);
  if (!answer) return fail(answer.error());
  std::vector<protocol::bytes> binaries;
  const char* why = "";
  if (!protocol::decode_payload(answer->data(), answer->size(), binaries, why)) return fail(CL_OUT_OF_RESOURCES);
  return binaries;
}

}  // namespace ferry::client
