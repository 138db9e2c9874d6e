#include "vm/crypto/hasher.h"

#include "vm/crypto/rpo.h"

namespace flamefleet::vm {

const Hasher& DefaultHasher() { return RpoHasher::Get(); }

}  // namespace flamefleet::vm
