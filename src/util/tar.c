#include "util/tar.h"
