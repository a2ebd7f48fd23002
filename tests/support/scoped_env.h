// Sets (or unsets) an environment variable for one scope and puts back what was there, so that
// a test that changes HEARTH_CPU does not change the level the rest of its process runs at
// (the test command runs whole test executables at each HEARTH_CPU level).
#pragma once

#include <QByteArray>
#include <QtGlobal>
#include <optional>

namespace hearth::test {

class ScopedEnv {
public:
    // value empty (std::nullopt): the variable is unset for the scope.
    ScopedEnv(const char* name, std::optional<QByteArray> value) : name_(name) {
        if (qEnvironmentVariableIsSet(name)) old_ = qgetenv(name);
        if (value) qputenv(name, *value);
        else qunsetenv(name);
    }
    ~ScopedEnv() {
        if (old_) qputenv(name_, *old_);
        else qunsetenv(name_);
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
    const char* name_;
    std::optional<QByteArray> old_;
};

}  // namespace hearth::test
