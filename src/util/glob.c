#include "util/glob.h"
