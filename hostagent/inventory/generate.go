package inventory

// Regenerate the synthetic hardware trees under testdata/hw at the repository
// root (see internal/hwgen).
//
//go:generate go run ./internal/hwgen -out ../../testdata/hw
