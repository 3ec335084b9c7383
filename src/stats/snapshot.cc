#include "stats/snapshot.h"
