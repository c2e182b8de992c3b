//! GET /openapi.json: the OpenAPI 3 document, generated from the handlers' annotations and the
//! wire types' derives (so it cannot drift from the code).

use super::{account, health, nesting};
use crate::wire;
use axum::Json;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

#[derive(OpenApi)]
#[openapi(
    info(title = "kerf", description = "Nesting service: 2D nests of DXF, JSON-contour and parametric parts. Every endpoint but the health checks and this document needs `Accept: application/json` and `Authorization: Bearer <API key>`."),
    paths(
        nesting::submit_dxf, nesting::submit_geometry, nesting::submit_parametric,
        nesting::status, nesting::result, nesting::delayed_start, nesting::failures,
        account::validate, account::valid_until,
        health::healthz, health::readyz,
    ),
    components(schemas(wire::NestingResultData, wire::NestingResultResponse)),
    modifiers(&BearerAuth),
)]
pub struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("kerf_<id>_<secret>")
                    .build(),
            ),
        );
    }
}

/// The document.
pub async fn openapi_json() -> Json<utoipa::openapi::OpenApi> {
    Json(ApiDoc::openapi())
}
