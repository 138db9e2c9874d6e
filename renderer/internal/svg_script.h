// The static CSS and JavaScript embedded in every flamefleet SVG (see
// svg_script.cc for what the script does). Internal to the renderer.
#ifndef FLAMEFLEET_RENDERER_INTERNAL_SVG_SCRIPT_H_
#define FLAMEFLEET_RENDERER_INTERNAL_SVG_SCRIPT_H_

#include "absl/strings/string_view.h"

namespace flamefleet::renderer::internal {

// Returns the interactive script. It expects these globals to be declared
// before it: W (image width), XPAD, FONT_SIZE, FONT_WIDTH, INVERTED, NAME_TYPE,
// SEARCH_COLOR, TOTAL. The text contains no "]]>" and may be placed in a CDATA
// section.
absl::string_view SvgScript();

}  // namespace flamefleet::renderer::internal

#endif  // FLAMEFLEET_RENDERER_INTERNAL_SVG_SCRIPT_H_
