// Where things live when a context spans several servers, and the messages
// that move them.
//
// Every buffer of such a context exists on each of its servers under one id;
// its root (see root_of) records which servers hold the latest contents. A
// command on a server without them first migrates them there: the client
// asks a holder to push the bytes over its peer link (migrate_out) and the
// destination writes them in the command's queue (migrate_in); the command
// waits for that write. No buffer byte crosses the client's links.
//
// An event of one server in a wait list of another is exported by its home
// server and imported, as a native user event, by the other; the home server
// sends the status itself when the command ends (peer_event_status). Neither
// path waits for a message through the client, except failures: a server
// that cannot reach its peer tells the client, which fails the waiting side.
#pragma once

#include <span>
#include <vector>

#include "client/core/objects.hpp"
#include "client/core/servers/server.hpp"

namespace ferry::client {

/// How a command uses a memory object.
enum class access {
  read,     ///< reads the contents
  write,    ///< reads and writes them (or writes part of them)
  replace,  ///< overwrites every byte of the root without reading
};

/// The object that carries placement for `m`: the parent of a sub-buffer,
/// the buffer under an image made from one, `m` itself otherwise.
memory* root_of(memory* m);

/// How a write of [offset, offset + size) of `m` uses it: `replace` when it
/// covers the whole root, `write` otherwise.
access access_for_write(const memory* m, size_t offset, size_t size);

/// Records where a new root's contents are: on `with_data` alone (initial
/// contents sent there), or on every server of its context when it has none
/// (undefined contents are current everywhere).
void place_new(memory* root, server* with_data);

/// Makes `m`'s contents current on `to` for a command of queue `q` that
/// uses it `how` and waits for `waits`; updates the holders. When bytes must
/// move, sets `arrival` to the id of the (kept) native event of their write
/// on `to`: the command waits for it and releases it once sent. `dependent`
/// (may be null) is the command's event, failed with
/// CL_DEVICE_NOT_AVAILABLE if the migration fails. CL_INVALID_OPERATION for
/// an image whose contents are elsewhere (images do not migrate yet),
/// CL_DEVICE_NOT_AVAILABLE when the holder is unreachable.
/// `writer` (a command just sent to its server) may have written `root`:
/// later migrations out of that server wait for it (see _cl_mem::last_writer).
void note_writer(memory* root, event* writer);

cl_int bring_contents(memory* m, access how, server& to, queue& q, std::span<const cl_event> waits,
                      event* dependent, protocol::object_id& arrival);

/// Makes every event of `events` that lives on another server usable in
/// wait lists of `target` (exported by its home, imported by `target`, once
/// per event and server). Call before posting the command that waits.
void import_events(server& target, std::span<const cl_event> events);

/// The connections that hold `e` (its home or, for user events, every
/// server of its context, and every importer), for release_object.
std::vector<connection*> event_links(event* e);

/// The servers where `o` exists (release_object goes to each).
std::vector<connection*> links_holding(object_base* o);

}  // namespace ferry::client
