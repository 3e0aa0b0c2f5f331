"""Tests of dms.web: the JSON:API core, the OpenAPI document, the HTTP server and the routes."""
