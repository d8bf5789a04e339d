from django.contrib import admin

from shop.models import Order


@admin.register(Order)
class OrderAdmin(admin.ModelAdmin):
    list_display = ("id", "customer", "email", "total", "status", "placed", "gift")
    list_filter = ("status", "gift", "placed")
    search_fields = ("customer", "email")
    date_hierarchy = "placed"
