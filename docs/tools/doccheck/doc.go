// Package doccheck holds tests that keep docs/ true to the code: today,
// that the import table of docs/architecture.md is exactly what go list
// reports.
package doccheck
