"""Page operations on documents: delete, reorder, rotate, move, merge, split at separator sheets."""
