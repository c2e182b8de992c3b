//! Errors of the API and their status codes and bodies (DESIGN 5.3): submissions answer 400 and
//! 401 in the ApiNestingResult shape; other endpoints `{Success: false, Error}`.

use crate::wire::cut1d::{ApiNesting1DResult, Nesting1DResult, ResponseStatus};
use crate::wire::{ApiNestingResult, ContinueAck, ErrorBody, FieldError, FieldErrorBody};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;

/// Which body an error is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `{Success: false, Error}`.
    Generic,
    /// ApiNestingResult: `{RequestId: "", Error, Errors[]}` (the submission endpoints).
    Submission,
    /// ApiNestingResult plus ResponseStatus `{ErrorCode, Message, Errors[{FieldName, ...}]}`
    /// (POST /v1/nesting/1D).
    Submission1D,
    /// ContinueAck `{Success: false, ErrorReason}` (delayed start).
    Ack,
    /// The 1D result with Status Failure, StatusReport and ResponseStatus (POST
    /// /v1/nesting/1D/result).
    Result1D,
}

/// The ResponseStatus ErrorCode of an HTTP status.
fn error_code(status: StatusCode) -> &'static str {
    match status {
        StatusCode::BAD_REQUEST => "ValidationError",
        StatusCode::UNAUTHORIZED => "Unauthorized",
        StatusCode::FORBIDDEN => "Forbidden",
        StatusCode::NOT_FOUND => "NotFound",
        StatusCode::NOT_ACCEPTABLE => "NotAcceptable",
        StatusCode::PAYLOAD_TOO_LARGE => "PayloadTooLarge",
        StatusCode::TOO_MANY_REQUESTS => "TooManyRequests",
        _ => "InternalError",
    }
}

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    pub errors: Vec<FieldError>,
    pub retry_after_s: Option<u64>,
    pub shape: Shape,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
            errors: Vec::new(),
            retry_after_s: None,
            shape: Shape::Generic,
        }
    }
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }
    /// A 400 listing every field error; the message names the first.
    pub fn fields(errors: Vec<FieldError>) -> ApiError {
        let message = match errors.as_slice() {
            [one] => one.to_string(),
            [first, rest @ ..] => format!("{first} (and {} more problems)", rest.len()),
            [] => "invalid request".into(),
        };
        ApiError {
            errors,
            ..ApiError::bad_request(message)
        }
    }
    /// A 400 for one field, named by its JSON path, with the reason.
    pub fn field(field: impl Into<String>, message: impl Into<String>) -> ApiError {
        ApiError::fields(vec![FieldError {
            field: field.into(),
            message: message.into(),
        }])
    }
    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, message)
    }
    pub fn internal(e: impl std::fmt::Display) -> ApiError {
        tracing::error!(error = %e, "internal error");
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal error; the request was not processed",
        )
    }
    pub fn shaped(mut self, shape: Shape) -> ApiError {
        self.shape = shape;
        self
    }
}

impl From<crate::store::StoreError> for ApiError {
    fn from(e: crate::store::StoreError) -> ApiError {
        ApiError::internal(e)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let code = error_code(self.status);
        let submission = |message: String, errors: &[FieldError]| ApiNestingResult {
            request_id: String::new(),
            error: Some(message),
            errors: errors
                .iter()
                .map(|e| FieldErrorBody {
                    field_name: e.field.clone(),
                    message: e.message.clone(),
                })
                .collect(),
            warnings: Vec::new(),
        };
        let mut response = match self.shape {
            Shape::Submission => {
                (self.status, Json(submission(self.message, &self.errors))).into_response()
            }
            Shape::Submission1D => (
                self.status,
                Json(ApiNesting1DResult {
                    response_status: Some(ResponseStatus::new(code, &self.message, &self.errors)),
                    base: submission(self.message, &self.errors),
                }),
            )
                .into_response(),
            Shape::Ack => (
                self.status,
                Json(ContinueAck {
                    success: false,
                    error_reason: Some(self.message),
                }),
            )
                .into_response(),
            Shape::Result1D => (
                self.status,
                Json(Nesting1DResult::failure(code, &self.message, &self.errors)),
            )
                .into_response(),
            // no list of errors in this shape: the message names every problem
            Shape::Generic => (
                self.status,
                Json(ErrorBody {
                    success: false,
                    error: if self.errors.is_empty() {
                        self.message
                    } else {
                        crate::wire::describe(&self.errors)
                    },
                }),
            )
                .into_response(),
        };
        if let Some(s) = self.retry_after_s {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(s));
        }
        if self.status == StatusCode::UNAUTHORIZED {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}
