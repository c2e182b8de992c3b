//! GET /openapi.json: the OpenAPI 3 document, generated from the handlers' annotations and the
//! wire types' derives (so it cannot drift from the code).

use super::{account, exports, health, keys, legacy, nesting, nesting1d, quote};
use crate::wire;
use axum::Json;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

#[derive(OpenApi)]
#[openapi(
    info(title = "kerf", description = "Nesting service: 2D nests of DXF, JSON-contour and parametric parts, quotes (each part priced alone), and 1D cutting plans. Every endpoint but the health checks and this document needs `Accept: application/json` and `Authorization: Bearer <API key>`."),
    paths(
        nesting::submit_dxf, nesting::submit_geometry, nesting::submit_parametric,
        nesting::status, nesting::result, nesting::delayed_start, nesting::continue_nest, nesting::failures,
        nesting1d::submit_1d, nesting1d::result_1d,
        legacy::submit_legacy,
        quote::submit_quote, quote::submit_geometry_quote, quote::export_quote,
        exports::render, exports::export, exports::cached,
        account::validate, account::valid_until, account::status, account::fairness, account::recent_jobs,
        keys::create, keys::list, keys::revoke, keys::regenerate, keys::set_type, keys::set_weight,
        keys::origins, keys::add_origin, keys::remove_origin,
        health::healthz, health::readyz,
    ),
    components(schemas(wire::NestingResultData, wire::NestingResultResponse, wire::ErrorBody, wire::cut1d::Nesting1DWebhookPayload, wire::RenderResponse, wire::exports::ExportFailure, wire::ClientKey, wire::CreateKeyRequest, wire::KeyTypeBody, wire::KeyWeightBody, wire::OriginBody, wire::OriginList, wire::SubscriptionStatus, wire::FairnessUsageResponse, wire::quote::QuotePayload, wire::quote::QuoteExport)),
    modifiers(&BearerAuth),
)]
pub struct ApiDoc;

/// Declares the bearer scheme, and on every operation that needs a key the answers every such
/// operation can give (401 key missing or refused, 406 wrong Accept), unless it states its own.
struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder};
        let error = |description: &str| {
            ResponseBuilder::new()
                .description(description)
                .content(
                    "application/json",
                    ContentBuilder::new()
                        .schema(Some(Ref::from_schema_name("ErrorBody")))
                        .build(),
                )
                .build()
        };
        for item in doc.paths.paths.values_mut() {
            for op in [
                &mut item.get,
                &mut item.post,
                &mut item.put,
                &mut item.delete,
                &mut item.patch,
            ]
            .into_iter()
            .flatten()
            {
                if op.security.as_ref().is_none_or(|s| s.is_empty()) {
                    continue;
                }
                let r = &mut op.responses.responses;
                r.entry("401".into()).or_insert_with(|| {
                    error("API key missing, unknown, expired or cancelled").into()
                });
                r.entry("406".into())
                    .or_insert_with(|| error("Accept is not application/json").into());
            }
        }
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
