// Why a backend is unavailable, as a value (the reason string is for people debugging): the
// app words it for users in their language (app/chat/backend_choices.h). Free of everything,
// so that the CUDA plugin's sources include it too.
#pragma once

namespace hearth {

enum class BackendProblem {
    None,
    NotBuilt,  // this build has no such backend (no CUDA toolkit at build time)
    NoDriver,  // no NVIDIA driver: libcuda cannot be loaded
    NoDevice,  // a driver, but no NVIDIA GPU
    DriverTooOld,  // the driver's CUDA is older than the one this build needs
    Other,  // see the reason
};

}  // namespace hearth
