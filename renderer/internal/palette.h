// Frame colours: palettes, name hashing and differential colours. Internal to
// the renderer.
#ifndef FLAMEFLEET_RENDERER_INTERNAL_PALETTE_H_
#define FLAMEFLEET_RENDERER_INTERNAL_PALETTE_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "renderer/flamegraph.h"

namespace flamefleet::renderer::internal {

struct Rgb {
  int r = 0, g = 0, b = 0;
};

// Returns "rgb(r,g,b)".
std::string RgbString(Rgb c);

// Returns the colour of a frame named `name` in `palette`: deterministic, a
// function of the name only. With `prefix_hash` similar names (same leading
// characters) get similar colours.
Rgb FrameColour(Palette palette, absl::string_view name, bool prefix_hash);

// Returns the differential colour for `delta` with `max_abs_delta` >= |delta|:
// near-white at 0, saturating red for growth and blue for shrinkage.
Rgb DiffColour(double delta, double max_abs_delta);

// Returns the two gradient stops of the background for `bg` ("" = palette
// default, yellow|blue|green|grey|#rrggbb); false if `bg` is not one of those.
bool BackgroundStops(Palette palette, absl::string_view bg, std::string* top, std::string* bottom);

}  // namespace flamefleet::renderer::internal

#endif  // FLAMEFLEET_RENDERER_INTERNAL_PALETTE_H_
