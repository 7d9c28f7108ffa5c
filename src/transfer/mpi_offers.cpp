#include "transfer/mpi_offers.hpp"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>

#include "common/log.hpp"
#include "transfer/mpi_waits.hpp"

namespace ferry::transfer {
namespace {

// The two messages of the agreement. Both ranks run this library (only it
// sends offers), so the ticket travels as the struct it is; the sizes and
// marks are checked all the same.
constexpr uint32_t offer_mark = 0x52464f46;   // "FOFR"
constexpr uint32_t answer_mark = 0x534e4146;  // "FANS"
constexpr uint32_t offer_version = 1;

struct offer_message {
  uint32_t mark;
  uint32_t version;
  uint64_t sequence;
  uint64_t size;
};

struct answer_message {
  uint32_t mark;
  uint32_t accepted;
  uint64_t sequence;
  cl_ferry_peer_ticket ticket;
};

int count_of(const MPI_Status& status) {
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  return count < 0 ? 0 : count;
}

/// The answers this process waits for. Threads that wait on one rank and tag
/// take each other's answers off MPI's queue; each is kept here, under its
/// offer's sequence number, for the thread that waits for it.
class answer_mailbox {
 public:
  uint64_t open() {
    std::lock_guard lock(mutex_);
    const uint64_t sequence = next_++;
    waiting_.insert(sequence);
    return sequence;
  }

  void close(uint64_t sequence) {
    std::lock_guard lock(mutex_);
    waiting_.erase(sequence);
    kept_.erase(sequence);
  }

  /// One look for the answer to `sequence`: `found` when it is here.
  int look(uint64_t sequence, int dest, int tag, MPI_Comm comm, bool& found, offer_answer& out) {
    std::lock_guard lock(mutex_);
    found = false;
    for (;;) {
      if (auto it = kept_.find(sequence); it != kept_.end()) {
        out = it->second;
        found = true;
        return MPI_SUCCESS;
      }
      int there = 0;
      MPI_Message message;
      MPI_Status status;
      if (int rc = MPI_Improbe(dest, tag, comm, &there, &message, &status); rc != MPI_SUCCESS) return rc;
      if (!there) return MPI_SUCCESS;
      const int count = count_of(status);
      if (count != static_cast<int>(sizeof(answer_message))) {
        FERRY_WARN("transfer", "a message of %d bytes from rank %d on the answer tag %d is not an answer; dropped",
                   count, status.MPI_SOURCE, tag);
        discard_message(message, count);
        continue;
      }
      answer_message answer;
      if (int rc = MPI_Mrecv(&answer, count, MPI_BYTE, &message, MPI_STATUS_IGNORE); rc != MPI_SUCCESS) return rc;
      if (answer.mark != answer_mark || !waiting_.contains(answer.sequence)) {
        FERRY_WARN("transfer", "an answer from rank %d (tag %d) to no offer of this process; dropped",
                   status.MPI_SOURCE, tag);
        continue;
      }
      offer_answer& kept = kept_[answer.sequence];
      kept.accepted = answer.accepted != 0;
      kept.ticket = answer.ticket;
    }
  }

 private:
  std::mutex mutex_;
  uint64_t next_ = 1;
  std::set<uint64_t> waiting_;
  std::map<uint64_t, offer_answer> kept_;
};

answer_mailbox& mailbox() {
  static auto* box = new answer_mailbox;  // transfer threads may outlive static destruction
  return *box;
}

}  // namespace

offer_tags job_offer_tags() {
  int* upper = nullptr;
  int found = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &upper, &found);
  return offer_tags{found && upper ? *upper : 32767};
}

size_t least_offered_size() {
  static const size_t least = [] {
    size_t value = 0;
    std::string why;
    if (!parse_least_offered_size(std::getenv("FERRY_TRANSFER_PEER_MIN"), value, &why)) {
      FERRY_WARN("transfer", "%s; using 64K", why.c_str());
      value = default_least_offered;
    }
    return value;
  }();
  return least;
}

int offer_and_wait(size_t size, int dest, int tag, MPI_Comm comm, offer_answer& answer, std::string& why) {
  const offer_tags tags = job_offer_tags();
  answer_mailbox& box = mailbox();
  const uint64_t sequence = box.open();
  const offer_message offer{offer_mark, offer_version, sequence, size};
  int rc = send_patiently(&offer, sizeof offer, dest, tags.offer(tag), comm);
  backoff pauses;
  bool found = false;
  while (rc == MPI_SUCCESS && !found) {
    rc = box.look(sequence, dest, tags.answer(tag), comm, found, answer);
    if (rc == MPI_SUCCESS && !found) pauses.pause();
  }
  box.close(sequence);
  if (rc != MPI_SUCCESS) {
    why = "offering the bytes";
    return rc;
  }
  if (answer.accepted && answer.ticket.size != size) {
    // A receiver of another size refuses; a ticket of another size is no answer to this offer.
    why = "rank " + std::to_string(dest) + " answered an offer of " + std::to_string(size) + " bytes with a ticket for " +
          std::to_string(answer.ticket.size);
    return MPI_ERR_OTHER;
  }
  return MPI_SUCCESS;
}

int probe_arrival(int source, int tag, MPI_Comm comm, arrival& out) {
  const offer_tags tags = job_offer_tags();
  backoff pauses;
  for (;;) {
    int found = 0;
    if (tag != MPI_ANY_TAG) {
      if (int rc = MPI_Improbe(source, tag, comm, &found, &out.message, &out.status); rc != MPI_SUCCESS) return rc;
      if (found) {
        out.is_offer = false;
        out.user_tag = tag;
        return MPI_SUCCESS;
      }
      if (int rc = MPI_Improbe(source, tags.offer(tag), comm, &found, &out.message, &out.status); rc != MPI_SUCCESS)
        return rc;
      if (found) {
        out.is_offer = true;
        out.user_tag = tag;
        return MPI_SUCCESS;
      }
    } else {
      // Any tag: look at the first message without taking it, then take it
      // by its own source and tag unless it is an answer, which belongs to
      // the thread that offered (and which takes it soon).
      MPI_Status seen;
      if (int rc = MPI_Iprobe(source, MPI_ANY_TAG, comm, &found, &seen); rc != MPI_SUCCESS) return rc;
      int user_tag = 0;
      const offer_tags::use use = found ? tags.use_of(seen.MPI_TAG, &user_tag) : offer_tags::use::answer;
      if (found && use != offer_tags::use::answer) {
        int taken = 0;
        if (int rc = MPI_Improbe(seen.MPI_SOURCE, seen.MPI_TAG, comm, &taken, &out.message, &out.status);
            rc != MPI_SUCCESS)
          return rc;
        if (taken) {  // (else another thread took it first)
          out.is_offer = use == offer_tags::use::offer;
          out.user_tag = user_tag;
          return MPI_SUCCESS;
        }
      }
    }
    pauses.pause();
  }
}

bool receive_offer(arrival& found, received_offer& out, std::string& why) {
  const int count = count_of(found.status);
  out.source = found.status.MPI_SOURCE;
  out.user_tag = found.user_tag;
  if (count != static_cast<int>(sizeof(offer_message))) {
    discard_message(found.message, count);
    why = "a message of " + std::to_string(count) + " bytes from rank " + std::to_string(out.source) +
          " on the offer tag of tag " + std::to_string(out.user_tag) + " is not an offer";
    return false;
  }
  offer_message offer;
  if (int rc = MPI_Mrecv(&offer, count, MPI_BYTE, &found.message, MPI_STATUS_IGNORE); rc != MPI_SUCCESS) {
    why = "receiving an offer failed (MPI error " + std::to_string(rc) + ")";
    return false;
  }
  if (offer.mark != offer_mark || offer.version != offer_version) {
    why = "an offer from rank " + std::to_string(out.source) + " of another version of libferry_transfer";
    return false;
  }
  out.sequence = offer.sequence;
  out.size = offer.size;
  return true;
}

int answer_offer(const received_offer& offer, MPI_Comm comm, const cl_ferry_peer_ticket* ticket) {
  answer_message answer{};
  answer.mark = answer_mark;
  answer.accepted = ticket != nullptr;
  answer.sequence = offer.sequence;
  if (ticket) answer.ticket = *ticket;
  return send_patiently(&answer, sizeof answer, offer.source, job_offer_tags().answer(offer.user_tag), comm);
}

}  // namespace ferry::transfer
