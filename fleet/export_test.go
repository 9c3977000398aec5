package fleet

// FileReference is docs/stack.md, for the tests of package fleet_test.
var FileReference = fileReference
