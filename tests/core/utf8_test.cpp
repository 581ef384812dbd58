// The terminal escape every stderr message goes through (printable_text, terminal.h), and the
// UTF-8 validation it shares its decoder with.
#include <gtest/gtest.h>

#include <string>

#include "vlbias/core/terminal.h"
#include "vlbias/core/utf8.h"

namespace vlbias {
namespace {
namespace in_utf8_test {

TEST(PrintableText, EscapesEscBelCarriageReturnAndDeleteAndKeepsLineFeedAndTab) {
  // A label that would set the terminal's title (OSC 0 ... BEL) and clear the screen (CSI 2J).
  EXPECT_EQ(printable_text("x\x1b]0;pwned\x07y\x1b[2J\rz\x7f"),
            "x\\x1b]0;pwned\\x07y\\x1b[2J\\x0dz\\x7f");
  EXPECT_EQ(printable_text("two\nlines\tand a tab"), "two\nlines\tand a tab");
  EXPECT_EQ(printable_text(std::string("nul\0byte", 8)), "nul\\x00byte");
}

TEST(PrintableText, EscapesC1ControlsAndBytesThatAreNotUtf8ButKeepsOtherText) {
  // U+009B is a one-character CSI on terminals that read C1 controls.
  EXPECT_EQ(printable_text("a\xc2\x9b"
                           "2Jb"),
            "a\\u009b2Jb");
  EXPECT_EQ(printable_text("\xff\xfe ok \xe2\x82"), "\\xff\\xfe ok \\xe2\\x82");
  EXPECT_EQ(printable_text("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a UTF-8-encoded surrogate
  EXPECT_EQ(printable_text("caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x99\x82 \xc2\xa0"),
            "caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x99\x82 \xc2\xa0");
  EXPECT_EQ(printable_text(""), "");
  EXPECT_EQ(printable_text("C:\\path with \\x1b spelled out"), "C:\\path with \\x1b spelled out");
}

TEST(FirstInvalidUtf8, FindsOverlongSurrogateAndTruncatedSequences) {
  EXPECT_EQ(first_invalid_utf8("caf\xc3\xa9"), 5u);
  EXPECT_EQ(first_invalid_utf8("ab\xc0\xaf"), 2u);          // overlong '/'
  EXPECT_EQ(first_invalid_utf8("a\xed\xa0\x80"), 1u);       // surrogate
  EXPECT_EQ(first_invalid_utf8("ab\xf4\x90\x80\x80"), 2u);  // above U+10FFFF
  EXPECT_EQ(first_invalid_utf8("abc\xe2\x82"), 3u);         // cut short
}

}  // namespace in_utf8_test
}  // namespace
}  // namespace vlbias
