package view

import "github.com/pifs/pifs/cache"

// walkGuess follows the listings of entry folders, to guess whether a
// walk is listing them (see cache.WalkGuess).
type walkGuess = cache.WalkGuess
