// The rules of the offers that let MPI transfers go server to server
// (mpi_offers.hpp), without MPI: which tags carry offers and answers, and
// which sizes are offered.
//
// Tags: the offer for user tag t goes on MPI_TAG_UB - 2t and its answer on
// MPI_TAG_UB - 2t - 1; transfer commands take user tags up to a third of
// MPI_TAG_UB, so that the three ranges never meet.
#pragma once

#include <cstddef>
#include <string>

namespace ferry::transfer {

/// The tags of the agreement, from MPI_TAG_UB (`bound`, at least 32767 by the standard).
struct offer_tags {
  int bound;

  /// The largest tag a transfer command takes.
  int largest_user_tag() const { return (bound - 1) / 3 - 1; }
  int offer(int user_tag) const { return bound - 2 * user_tag; }
  int answer(int user_tag) const { return bound - 2 * user_tag - 1; }

  enum class use { user, offer, answer };
  /// What `tag` (0 to bound) carries; `*user_tag` is the tag itself, or the
  /// one an offer or answer is for.
  use use_of(int tag, int* user_tag) const;
};

/// The least size offered when FERRY_TRANSFER_PEER_MIN is unset.
inline constexpr size_t default_least_offered = size_t{64} << 10;

/// Parses FERRY_TRANSFER_PEER_MIN: bytes with an optional K, M or G, "0"
/// for every send, "off" for none (SIZE_MAX); null or empty gives the
/// default. False, with `*why`, for anything else.
bool parse_least_offered_size(const char* text, size_t& out, std::string* why);

}  // namespace ferry::transfer
