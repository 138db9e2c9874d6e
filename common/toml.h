// toml++, header-only with exceptions off, whatever flags the build passes. Include this header,
// never <toml++/toml.h> directly.
//
// Debian's libtomlplusplus.so is built with exceptions on and exports only toml::v3::ex::parse,
// so TOML_EXCEPTIONS=0 (which selects toml::v3::noex::parse returning a parse_result) cannot link
// against it, and the pkg-config / CMake target flags (-DTOML_SHARED_LIB=1
// -DTOML_HEADER_ONLY=0) would ask for exactly that.
#ifndef FLAMEFLEET_COMMON_TOML_H_
#define FLAMEFLEET_COMMON_TOML_H_

#undef TOML_EXCEPTIONS
#define TOML_EXCEPTIONS 0
#undef TOML_SHARED_LIB
#define TOML_SHARED_LIB 0
#undef TOML_HEADER_ONLY
#define TOML_HEADER_ONLY 1
#include <toml++/toml.h>

#endif  // FLAMEFLEET_COMMON_TOML_H_
