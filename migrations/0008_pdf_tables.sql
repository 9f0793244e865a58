-- Tychora canonical corpus, schema 8: PDF tables with row provenance (issue 12). A PDF table row's
-- cells keep their box on the page, so each value can be checked where it is printed; a table
-- continued on the next page keeps one table number, each row its own page.

ALTER TABLE table_cells ADD COLUMN box_json TEXT; -- PDF: [x0, y0, x1, y1] in points, origin bottom-left
