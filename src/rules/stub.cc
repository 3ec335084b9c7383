// Placeholder translation unit so the module builds before its implementation lands.
#include "rules/rules.h"
