"""The HTTP side: the Bottle application and its route tables (dms.web.api), the endpoint
glue that authenticates, calls the domain and turns dms.errors into the JSON:API envelope, the
waitress server, OpenAPI, and the static web page. Nothing below this package imports bottle or
waitress."""
