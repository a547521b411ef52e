// The page's calls to its routes (/api/cognition/…): the WebUI's login cookie goes along; every
// change is a POST with a JSON body and the page's header (the routes' CSRF check).

const BASE = "/api/cognition";

export class ApiError extends Error {
  constructor(message, status) {
    super(message);
    this.status = status;
  }
}

async function read(response) {
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (!response.ok || !body || body.success === false) {
    const message = body && (body.message || body.detail) ? String(body.message || body.detail) : `请求失败（${response.status}）`;
    throw new ApiError(response.status === 401 ? "未登录或登录已过期，请重新登录 WebUI" : message, response.status);
  }
  return body;
}

export async function get(path, params = {}) {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== "" && value !== null && value !== undefined) query.set(key, String(value));
  }
  const text = query.toString();
  const response = await fetch(`${BASE}${path}${text ? `?${text}` : ""}`, { credentials: "same-origin" });
  return dataOf(response);
}

/** The data of a GET's answer (an error with the route's message when it failed). */
export async function dataOf(response) {
  return (await read(response)).data;
}

export async function post(path, body = {}) {
  const response = await fetch(`${BASE}${path}`, {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-Cognition-Page": "1" },
    body: JSON.stringify(body),
  });
  return read(response);
}

export function enc(part) {
  return encodeURIComponent(part);
}
