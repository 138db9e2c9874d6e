#include "vm/crypto/hasher.h"

#include "vm/crypto/rpo.h"

namespace flamefleet::vm {

// TODO(#13): the DialectSpec will supply the hasher; until then RPO is chosen here only.
const Hasher& DefaultHasher() { return RpoHasher::Get(); }

}  // namespace flamefleet::vm
