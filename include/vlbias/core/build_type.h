#pragma once
// What kind of build this copy of the library is, asked at run time.
//
// CI compiles the tests once, in the sanitizer build, and links them twice: against that
// build's libraries and against the Release build's (tests/CMakeLists.txt). A test that sizes
// its work to the build (every Unicode plane in Release, the Basic Multilingual Plane under
// the sanitizers) therefore asks the library it runs against, not the macros it was compiled
// with.

namespace vlbias {

// True when the core library was compiled with NDEBUG (Release and RelWithDebInfo builds);
// false in Debug builds, which the sanitizer build is.
bool release_build();

}  // namespace vlbias
