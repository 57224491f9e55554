// Package docker owns patchproof's side of the Docker Engine API: connecting
// to the engine, the images it makes locally from Debian's packages (no
// registry needed), containers run under a Spec that says everything they
// may see and use, the internal networks that join them, and the labels by
// which every container and network is removed on every exit path, and by
// which a later run removes what a killed one left.
//
// A container is given only what its Spec names: its environment is the
// Spec's alone (nothing of patchproof's own, no token), host paths are bound
// at the same path inside so that a path means the same on both sides, its
// network is none or an internal network (no route out), and it has memory
// and pids limits. Nothing here mounts the engine's socket.
package docker
