// Package images holds the recipes of the images patchproof makes, as
// Dockerfiles: the build image (builds and test suites), the serve image
// (a build's servers) and the database image. They are built with the
// engine's own builder (internal/docker.EnsureImage), from a Debian base
// image that is pulled where a registry answers and made with debootstrap
// where none does. Each takes the base as the build argument BASE, and the
// machine's apt sources as APT_SOURCES where it declares it.
package images

import (
	_ "embed"
)

// Build is the build image's recipe.
//
//go:embed build.Dockerfile
var Build []byte

// Serve is the serve image's recipe; its BASE is the build image.
//
//go:embed serve.Dockerfile
var Serve []byte

// MariaDB is the database image's recipe.
//
//go:embed mariadb.Dockerfile
var MariaDB []byte
