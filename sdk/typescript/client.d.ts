// Types for client.mjs, from openapi.d.ts (generated from docs/openapi.yaml by openapi-typescript).
import type { paths } from './openapi.js';
export type { paths, components, operations } from './openapi.js';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
/** The paths that have method M. */
export type PathsWith<M extends Method> = {
  [P in keyof paths]: paths[P] extends { [K in M]: object } ? P : never;
}[keyof paths];

type JSONOf<C> = C extends { content: { 'application/json': infer J } } ? J : undefined;
type Params<O> = O extends { parameters: infer P } ? P : never;
type Body<O> = O extends { requestBody: infer B } ? JSONOf<B> : O extends { requestBody?: infer B } ? JSONOf<B> : never;
/** The JSON of the operation's 2xx answers. */
export type Success<O> = O extends { responses: infer R }
  ? { [S in keyof R]: S extends 200 | 201 | 202 | 204 ? JSONOf<R[S]> : never }[keyof R]
  : never;

export interface RequestInit<O> {
  /** path, query and header parameters, as the operation names them. */
  params?: Params<O>;
  body?: Body<O>;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export interface Client {
  GET<P extends PathsWith<'get'>>(path: P, init?: RequestInit<paths[P]['get']>): Promise<Success<paths[P]['get']>>;
  POST<P extends PathsWith<'post'>>(path: P, init?: RequestInit<paths[P]['post']>): Promise<Success<paths[P]['post']>>;
  PUT<P extends PathsWith<'put'>>(path: P, init?: RequestInit<paths[P]['put']>): Promise<Success<paths[P]['put']>>;
  PATCH<P extends PathsWith<'patch'>>(path: P, init?: RequestInit<paths[P]['patch']>): Promise<Success<paths[P]['patch']>>;
  DELETE<P extends PathsWith<'delete'>>(path: P, init?: RequestInit<paths[P]['delete']>): Promise<Success<paths[P]['delete']>>;
  request(method: string, path: string, init?: RequestInit<unknown>): Promise<unknown>;
}

export interface ClientOptions {
  /** The API's base URL, e.g. https://abc.execute-api.us-east-1.amazonaws.com or http://127.0.0.1:8080 (make dev). */
  baseUrl: string | URL;
  /** The account's API key (sent as Authorization: Bearer). */
  apiKey?: string;
  fetch?: typeof globalThis.fetch;
  headers?: Record<string, string>;
}

export function createClient(options: ClientOptions): Client;

/** An answer other than 2xx. */
export class ApiError extends Error {
  readonly status: number;
  /** The API's error code ({"error":{"code"}}), when it sent one. */
  readonly code: string | undefined;
  readonly body: unknown;
  constructor(status: number, body: unknown);
}
