package httpapi

// BodyBufferSize is bodyBuffer, for the tests of package httpapi_test.
const BodyBufferSize = bodyBuffer
