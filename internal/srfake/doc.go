// Package srfake is an in-process Schema Registry that speaks the subset of
// Confluent's REST API that serializers, converters and kafkas3 use. It
// keeps everything in memory and serves plain HTTP, so tests (and the
// demo) can point a real registry client at it over loopback.
//
// Supported endpoints (content type application/vnd.schemaregistry.v1+json):
//
//	POST /subjects/{subject}/versions          register: {"id": N}; the same schema twice gives the same id;
//	                                           in IMPORT mode the body's "id" (and "version") are kept
//	GET  /mode, /mode/{subject}                {"mode": "READWRITE"|"IMPORT"|"READONLY"}
//	PUT  /mode, /mode/{subject}                set it; IMPORT only on a subject without versions unless ?force=true
//	POST /subjects/{subject}                   look a schema up under a subject
//	GET  /schemas/ids/{id}                     {"schema": ..., "schemaType": ...}
//	GET  /schemas/ids/{id}/schema              the schema text alone
//	GET  /schemas/ids/{id}/versions            [{"subject": ..., "version": ...}]
//	GET  /subjects                             subject names, sorted
//	GET  /subjects/{subject}/versions          version numbers
//	GET  /subjects/{subject}/versions/{v}      v is a number or "latest"
//	GET  /subjects/{subject}/versions/{v}/schema
//
// Errors carry Confluent's JSON body {"error_code": 40403, "message": ...}.
// With Config.User set, every request needs HTTP basic auth with that user
// and password (what basic.auth.user.info sends); others get 401.
//
// Schemas are compared by their compact JSON text, schema type and
// references; Avro schemas without references are checked to parse before
// they are registered (a schema with references only has them checked to
// exist). An import (IMPORT mode) with an id that holds another schema, or
// of a schema that has another id, is refused with error code 42205, as a
// registration with an id outside IMPORT mode; READONLY refuses every
// registration. Versions are imported in order only. There are no
// compatibility checks, contexts or deletes.
package srfake
