/** Markers that separate the API applications may use from implementation details. */
package dev.sluice.client.annotation;
