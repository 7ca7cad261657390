// Package doccheck holds tests that keep docs/ true to the code and to the
// present: the import table of docs/architecture.md is exactly what go list
// reports; every relative link and #anchor of README.md and docs/**/*.md
// resolves; and no page tells the history of the work (the sessions that
// wrote it, issue numbers, commit hashes, dates), which belongs in commit
// messages.
package doccheck
