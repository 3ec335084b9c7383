#include "stats/counters.h"
