#pragma once
// The identity of a run's input as its provenance records it (results.json's run.inputs, the
// audits' up-front checks). An input is a file (or a pipe, hashed by its reader as it reads), or
// a folder of Parquet shards, which read_table reads as one table in name order
// (train-00000-of-00004.parquet, ...). A folder's SHA-256 is that of the lines
// "<shard's SHA-256>  <shard's file name>\n" in byte order of the names, which
// `cd FOLDER && LC_ALL=C sha256sum *.parquet | sha256sum` recomputes; its bytes are the sum of
// the shards'. Any other folder, a device or a socket is refused as check_input_file refuses it.
#include <cstdint>
#include <optional>
#include <string>

#include "vlbias/core/input_file.h"

namespace vlbias {

// check_input_file(path), except that a folder of Parquet shards is accepted (as a File).
InputKind check_input_or_shards(const std::string& path);

// SHA-256 (hex) of a file's bytes, or of a folder of shards as above. InputError when a file or
// shard cannot be read.
std::string input_sha256(const std::string& path);

// The size in bytes of a file, or the sum of a folder's shards; nullopt when it cannot be read.
std::optional<std::uint64_t> input_bytes(const std::string& path);

}  // namespace vlbias
