// ReplyEngine's out-of-line destructor (its vtable lives here).
#include "app/engine_host/reply_engine.h"

namespace hearth {

ReplyEngine::~ReplyEngine() = default;

}  // namespace hearth
