// SHA-256 per FIPS 180-4, computed by OpenSSL's libcrypto.
#include "vlbias/core/sha256.h"

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include <openssl/evp.h>

#include "vlbias/core/error.h"
#include "vlbias/core/input_file.h"

namespace vlbias {

namespace {

// OpenSSL's SHA-256 (libcrypto's EVP interface): its x86-64 code uses the SHA extensions where
// the CPU has them, about 4x the throughput of portable code on a model's weights (hashed for
// every encode manifest and checkpoint key).
class Sha256 {
 public:
  Sha256() : ctx_(EVP_MD_CTX_new()) {
    VLBIAS_CHECK(ctx_ != nullptr && EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) == 1,
                 InternalError, "OpenSSL could not start a SHA-256 digest");
  }

  void update(const unsigned char* p, std::size_t n) {
    VLBIAS_CHECK(EVP_DigestUpdate(ctx_.get(), p, n) == 1, InternalError,
                 "OpenSSL's SHA-256 update failed");
  }

  std::string hex() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    VLBIAS_CHECK(EVP_DigestFinal_ex(ctx_.get(), digest, &length) == 1 && length == 32,
                 InternalError, "OpenSSL's SHA-256 digest failed");
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (unsigned int i = 0; i < length; ++i) {
      out.push_back(digits[digest[i] >> 4]);
      out.push_back(digits[digest[i] & 0xf]);
    }
    return out;
  }

 private:
  struct Free {
    void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
  };
  std::unique_ptr<EVP_MD_CTX, Free> ctx_;
};

}  // namespace

std::string sha256_hex(std::string_view bytes) {
  Sha256 h;
  h.update(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
  return h.hex();
}

std::string sha256_file(const std::string& path) {
  // Never opened: a device (its reads may never end), a folder; a pipe is hashed by its
  // reader as it reads it (input_file.h), since reading it here would take its bytes.
  if (check_input_file(path) == InputKind::Pipe) {
    std::string hex;
    VLBIAS_CHECK(recorded_pipe_sha256(path, &hex), UsageError,
                 "'{}' is a pipe, which vlbias reads only where it reads a table; give this "
                 "input as a file",
                 path);
    return hex;
  }
  InputFile file = open_input_file(path, "an input", PipeRule::Refuse);
  Sha256 h;
  std::vector<unsigned char> buf(1 << 20);
  for (std::size_t got; (got = file.read(buf.data(), buf.size())) > 0;) h.update(buf.data(), got);
  return h.hex();
}

}  // namespace vlbias
