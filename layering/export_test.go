package layering

// FileReference is docs/stack.md, for the tests of package layering_test.
var FileReference = fileReference
