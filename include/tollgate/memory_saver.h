// An in-memory Saver: for tests, demos and runs that need no persistence.
//
// Stores values like the persistent savers do (see Saver::put): unchanged channels are shared
// with the parent checkpoint, list channels given as ListDeltas keep only the appended items,
// with a full copy now and then so that reading any checkpoint stays cheap. Values that came
// with a delta, objects, arrays and pending writes are kept as their MessagePack encoding
// (one compact buffer each, decoded when read; a JSON tree takes several times the bytes, and
// the caller may append to a delta's list in place); a value of at most 15 bytes (nulls,
// flags, short strings) is kept in its channel's reference, not stored; other scalars are kept
// as the caller's JsonPtr (immutable, shared, no copy). A checkpoint's header and metadata are
// one buffer too, naming channels and nodes by index into one table per saver.
//
// Thread-safety: every method of the saver may be called concurrently; one mutex guards all
// its state. The saver counts what it stores (Saver::stats(); bytes are MessagePack sizes).
#pragma once

#include <memory>

#include "tollgate/checkpoint.h"

namespace tollgate {

// A new, empty in-memory saver.
std::shared_ptr<Saver> make_memory_saver();

}  // namespace tollgate
