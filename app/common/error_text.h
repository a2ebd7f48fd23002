// The one place that turns engine errors into the words a user reads.
#pragma once

#include <QString>

#include "engine/error.h"

namespace hearth {

QString describe(const Error& error);

}  // namespace hearth
