// Package srfake is an in-process Schema Registry that speaks the subset of
// Confluent's REST API that serializers, converters and kafkas3 use. It
// keeps everything in memory and serves plain HTTP, so tests (and the
// demo) can point a real registry client at it over loopback.
//
// Supported endpoints (content type application/vnd.schemaregistry.v1+json):
//
//	POST /subjects/{subject}/versions          register: {"id": N}; the same schema twice gives the same id
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
// Schemas are compared by their compact JSON text and schema type; Avro
// schemas are checked to parse before they are registered. There are no
// compatibility checks, modes, references, contexts or deletes.
package srfake
