package dev.sluice.client.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * API meant for applications. It may still change between minor versions while the project is
 * young, but each change is called out in the release notes. The types that carry it are listed in
 * {@code src/test/resources/public-api.txt}, which {@code PublicApiTest} compares with the sources:
 * a type that joins or leaves the API changes that list in the same diff.
 */
@Documented
@Retention(RetentionPolicy.CLASS)
@Target({ElementType.TYPE, ElementType.METHOD, ElementType.CONSTRUCTOR, ElementType.FIELD})
public @interface PublicEvolving {}
