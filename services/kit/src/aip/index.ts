// AIP machinery shared by the services: resource names and ids, filters, order_by, page tokens,
// list paging and update masks.
export * from "./ids.js";
export * from "./resource-name.js";
export * from "./duration.js";
export * from "./fields.js";
export * from "./filter-parser.js";
export * from "./filter-sql.js";
export * from "./order-by.js";
export * from "./page-token.js";
export * from "./paginate.js";
export * from "./field-mask.js";
