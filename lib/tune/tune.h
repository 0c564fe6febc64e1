/*
 * tune.h - what the tuning files share inside libaoe: measuring
 * children and the device lock.  Not installed.
 */
#ifndef AOE_TUNE_INT_H
#define AOE_TUNE_INT_H

#include "aoe_tune.h"
#include "engine.h"

/*
 * fork() for a measuring child: the child does not keep the device lock
 * open and is killed when its parent dies, so that a tuning run killed
 * with kill -9 leaves no child behind holding the device.
 */
pid_t aoe_fork_child(void);
/* The device lock's path: $AOE_DEVICE_LOCK, else /tmp/aoe-device.lock. */
const char *aoe_device_lock_path(void);

#endif
